//! Arrow record batches from Python (a polars frame's Arrow C stream) and their
//! columns as slices, for the passes.

use super::*;

/// The record batches of a Python object that exports an Arrow C stream (a polars
/// DataFrame).
pub(super) fn import_batches(obj: &Bound<'_, PyAny>) -> PyResult<Vec<RecordBatch>> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule holds an Arrow C stream (its name says so); from_raw moves
    // it out, leaving a released stream for the capsule's destructor.
    let reader = unsafe { RecordBatchStreamReader::from_raw(ptr.as_ptr() as *mut FFI_ArrowArrayStream) }
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    reader.collect::<Result<Vec<_>, _>>().map_err(|e| PyValueError::new_err(e.to_string()))
}

/// One column of `batches`, of type `T`, without nulls: borrowed from the caller's
/// array when it is one batch (polars exports a rechunked frame so), else copied into
/// one vector.
pub(super) fn values<'a, T: ArrowPrimitiveType>(batches: &'a [RecordBatch], name: &str) -> PyResult<Cow<'a, [T::Native]>> {
    let (values, nulls) = nullable::<T>(batches, name)?;
    if nulls.is_some() {
        return Err(PyValueError::new_err(format!("column {name:?}: {} with nulls, not {} without", T::DATA_TYPE, T::DATA_TYPE)));
    }
    Ok(values)
}

/// One column of `batches` that may hold nulls: its values (borrowed as `values` does)
/// and which are valid (None: all).
pub(super) fn nullable<'a, T: ArrowPrimitiveType>(batches: &'a [RecordBatch], name: &str) -> PyResult<(Cow<'a, [T::Native]>, Option<NullBuffer>)> {
    let mut arrays = Vec::with_capacity(batches.len());
    for b in batches {
        let col = b.column_by_name(name).ok_or_else(|| PyValueError::new_err(format!("no column {name:?}")))?;
        let a = col.as_primitive_opt::<T>().ok_or_else(|| {
            PyValueError::new_err(format!("column {name:?}: {}, not {}", col.data_type(), T::DATA_TYPE))
        })?;
        arrays.push(a);
    }
    let nulls = |a: &PrimitiveArray<T>| a.nulls().filter(|n| n.null_count() > 0).cloned();
    if let [a] = arrays[..] {
        return Ok((Cow::Borrowed(a.values().as_ref()), nulls(a)));
    }
    let values: Vec<T::Native> = arrays.iter().flat_map(|a| a.values().iter().copied()).collect();
    let valid = arrays.iter().any(|a| nulls(a).is_some()).then(|| {
        NullBuffer::from(arrays.iter().flat_map(|a| (0..a.len()).map(move |i| a.is_valid(i))).collect::<Vec<bool>>())
    });
    Ok((Cow::Owned(values), valid))
}

pub(super) fn flags(batches: &[RecordBatch], name: &str) -> PyResult<Vec<bool>> {
    let mut out = Vec::new();
    for b in batches {
        let col = b.column_by_name(name).ok_or_else(|| PyValueError::new_err(format!("no column {name:?}")))?;
        let a = col.as_boolean_opt().filter(|a| a.null_count() == 0).ok_or_else(|| {
            PyValueError::new_err(format!("column {name:?}: {} with nulls, not Boolean without", col.data_type()))
        })?;
        out.extend(a.values().iter());
    }
    Ok(out)
}
