//! The decoder's batches for `PacketReader`: read as Python consumes them (`Shared`),
//! or decoded ahead by a thread of their own and handed out piece by piece (`Piece`).

use super::*;

/// Decoder whose progress (`stats`) stays readable while polars consumes it.
pub(super) struct Shared {
    pub(super) decoder: Decoder,
    pub(super) stats: Arc<Mutex<Stats>>,
}

impl Iterator for Shared {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        let out = self.decoder.next_batch();
        *self.stats.lock().unwrap() = self.decoder.stats();
        out
    }
}

impl RecordBatchReader for Shared {
    fn schema(&self) -> SchemaRef {
        self.decoder.schema()
    }
}

/// Batches decoded ahead by a thread of their own (`PacketReader.piece`), so that
/// decoding the next piece overlaps the caller's work on this one (on two cores the
/// decoder's time then mostly disappears from the pipeline's wall time). At most
/// `ahead` batches wait in the channel (`PREFETCH_BATCHES` unless `prefetch` said
/// otherwise): memory stays bounded.
pub(super) type Batches = Receiver<Result<RecordBatch, ArrowError>>;
pub(super) const PREFETCH_BATCHES: usize = 8;

pub(super) fn spawn_prefetch(mut decoder: Decoder, stats: Arc<Mutex<Stats>>, ahead: usize) -> Batches {
    let (tx, rx) = sync_channel(ahead.max(1));
    thread::Builder::new()
        .name("pcapdecode".into())
        .spawn(move || {
            while let Some(batch) = decoder.next_batch() {
                *stats.lock().unwrap() = decoder.stats();
                if tx.send(batch).is_err() {
                    return; // the reader was dropped
                }
            }
            // before `tx` is dropped: a caller that saw the end reads the final stats
            *stats.lock().unwrap() = decoder.stats();
        })
        .expect("cannot start the decoder thread");
    rx
}

/// At most `left` more batches of a decoder that later pieces go on reading.
pub(super) struct Piece {
    pub(super) batches: Arc<Mutex<Batches>>,
    pub(super) schema: SchemaRef,
    pub(super) left: usize,
}

impl Iterator for Piece {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.batches.lock().unwrap().recv().ok() // Err: the decoder thread is done
    }
}

impl RecordBatchReader for Piece {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
