//! CONFIG.json parsing and validation. Every error names the offending field.

use crate::core::{DirConfig, JitterDist, Llr, LossModel, Rate};
use crate::trace::Trace;
use serde_json::{Map, Value};
use std::path::Path;

#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    pub down: DirConfig,
    pub up: DirConfig,
}

type R<T> = Result<T, String>;

fn err<T>(field: &str, msg: &str) -> R<T> {
    Err(format!("{}: {}", field, msg))
}

fn check_keys(obj: &Map<String, Value>, prefix: &str, allowed: &[&str]) -> R<()> {
    for k in obj.keys() {
        if !allowed.contains(&k.as_str()) {
            return err(&format!("{}{}", prefix, k), &format!("unknown field (allowed: {})", allowed.join(", ")));
        }
    }
    Ok(())
}

fn num(v: &Value, field: &str, min: f64, max: f64) -> R<f64> {
    match v.as_f64() {
        Some(x) if x.is_finite() && x >= min && x <= max => Ok(x),
        Some(_) => err(field, &format!("must be a number in [{}, {}]", min, max)),
        None => err(field, "must be a number"),
    }
}

fn prob(v: &Value, field: &str) -> R<f64> {
    num(v, field, 0.0, 1.0)
}

fn pos_int(v: &Value, field: &str) -> R<u64> {
    match v.as_u64() {
        Some(x) if x > 0 => Ok(x),
        _ => err(field, "must be a positive integer"),
    }
}

fn ms_to_ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

fn parse_loss(v: &Value, p: &str) -> R<LossModel> {
    let f = format!("{}loss", p);
    let obj = v.as_object().ok_or_else(|| format!("{}: must be an object", f))?;
    let model = match obj.get("model") {
        None => return err(&format!("{}.model", f), "missing (bernoulli, gilbert_elliott or none)"),
        Some(m) => m.as_str().ok_or_else(|| format!("{}.model: must be a string", f))?,
    };
    let get = |k: &str| obj.get(k);
    let field = |k: &str| format!("{}.{}", f, k);
    match model {
        "none" => {
            check_keys(obj, &format!("{}.", f), &["model"])?;
            Ok(LossModel::None)
        }
        "bernoulli" => {
            check_keys(obj, &format!("{}.", f), &["model", "p"])?;
            let p = prob(get("p").ok_or_else(|| format!("{}: missing", field("p")))?, &field("p"))?;
            Ok(LossModel::Bernoulli { p })
        }
        "gilbert_elliott" => {
            check_keys(obj, &format!("{}.", f), &["model", "p_gb", "p_bg", "loss_good", "loss_bad"])?;
            let p_gb = prob(get("p_gb").ok_or_else(|| format!("{}: missing", field("p_gb")))?, &field("p_gb"))?;
            let p_bg = prob(get("p_bg").ok_or_else(|| format!("{}: missing", field("p_bg")))?, &field("p_bg"))?;
            let loss_good = match get("loss_good") {
                Some(v) => prob(v, &field("loss_good"))?,
                None => 0.0,
            };
            let loss_bad = match get("loss_bad") {
                Some(v) => prob(v, &field("loss_bad"))?,
                None => 1.0,
            };
            Ok(LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad })
        }
        other => err(&format!("{}.model", f), &format!("unknown model {:?} (bernoulli, gilbert_elliott or none)", other)),
    }
}

/// `llr: {"delay_ms": D, "retries": N}`. It resends what the loss model
/// loses, so it needs one (`bernoulli` with p = 0 is one: llr then never acts).
fn parse_llr(v: &Value, p: &str, loss: &LossModel) -> R<Llr> {
    let f = format!("{}llr", p);
    let obj = v.as_object().ok_or_else(|| format!("{}: must be an object {{\"delay_ms\": D, \"retries\": N}}", f))?;
    check_keys(obj, &format!("{}.", f), &["delay_ms", "retries"])?;
    let field = |k: &str| format!("{}.{}", f, k);
    let delay = num(obj.get("delay_ms").ok_or_else(|| format!("{}: missing", field("delay_ms")))?, &field("delay_ms"), 0.0, 1e7)?;
    let retries = pos_int(obj.get("retries").ok_or_else(|| format!("{}: missing", field("retries")))?, &field("retries"))?;
    if retries > 1000 {
        return err(&field("retries"), "must be at most 1000");
    }
    if matches!(loss, LossModel::None) {
        return err(&f, "needs a loss model (the radio loss it retransmits): give loss");
    }
    Ok(Llr { delay_ns: ms_to_ns(delay), retries: retries as u32 })
}

fn resolve_trace(s: &str, config_dir: Option<&Path>) -> std::path::PathBuf {
    let p = Path::new(s);
    if p.is_absolute() || p.exists() {
        return p.to_path_buf();
    }
    if let Some(d) = config_dir {
        let q = d.join(p);
        if q.exists() {
            return q;
        }
    }
    p.to_path_buf()
}

/// `trace_offset_ms`: the trace time at linkem's start (a phase, taken modulo
/// the trace's period), so that runs can see different slices of one trace.
fn with_trace_offset(rate: Rate, v: &Value, p: &str) -> R<Rate> {
    let f = format!("{}trace_offset_ms", p);
    let off = v.as_u64().ok_or_else(|| format!("{}: must be a non-negative integer (ms)", f))?;
    match rate {
        Rate::Trace(t) => Ok(Rate::Trace(t.with_offset(off))),
        _ => err(&f, "needs a trace in the same direction (it is the phase the trace starts at)"),
    }
}

fn parse_dir(v: &Value, name: &str, config_dir: Option<&Path>) -> R<DirConfig> {
    let p = format!("{}.", name);
    let obj = v.as_object().ok_or_else(|| format!("{}: must be an object", name))?;
    check_keys(
        obj,
        &p,
        &[
            "delay_ms", "jitter_ms", "jitter_dist", "reorder", "loss", "llr", "rate_mbit", "trace", "trace_offset_ms",
            "queue_bytes", "queue_packets", "outages",
        ],
    )?;
    let mut c = DirConfig::default();
    if let Some(v) = obj.get("delay_ms") {
        c.delay_ns = ms_to_ns(num(v, &format!("{}delay_ms", p), 0.0, 1e7)?);
    }
    if let Some(v) = obj.get("jitter_ms") {
        c.jitter_ns = ms_to_ns(num(v, &format!("{}jitter_ms", p), 0.0, 1e7)?);
    }
    if let Some(v) = obj.get("jitter_dist") {
        c.jitter_dist = match v.as_str() {
            Some("uniform") => JitterDist::Uniform,
            Some("normal") => JitterDist::Normal,
            _ => return err(&format!("{}jitter_dist", p), "must be \"uniform\" or \"normal\""),
        };
    }
    if let Some(v) = obj.get("reorder") {
        c.reorder = v.as_bool().ok_or_else(|| format!("{}reorder: must be true or false", p))?;
    }
    if let Some(v) = obj.get("loss") {
        c.loss = parse_loss(v, &p)?;
    }
    if let Some(v) = obj.get("llr") {
        c.llr = Some(parse_llr(v, &p, &c.loss)?);
    }
    match (obj.get("rate_mbit"), obj.get("trace")) {
        (Some(_), Some(_)) => return err(&format!("{}rate_mbit", p), "rate_mbit and trace are mutually exclusive"),
        (Some(v), None) => {
            let r = num(v, &format!("{}rate_mbit", p), 0.0, 1e6)?;
            if r <= 0.0 {
                return err(&format!("{}rate_mbit", p), "must be > 0 (omit it for an unlimited rate)");
            }
            c.rate = Rate::Fixed(r * 1e6);
        }
        (None, Some(v)) => {
            let s = v.as_str().ok_or_else(|| format!("{}trace: must be a file path string", p))?;
            let path = resolve_trace(s, config_dir);
            let t = Trace::load(&path).map_err(|e| format!("{}trace: {}", p, e))?;
            c.rate = Rate::Trace(t);
        }
        (None, None) => {}
    }
    if let Some(v) = obj.get("trace_offset_ms") {
        c.rate = with_trace_offset(std::mem::replace(&mut c.rate, Rate::Unlimited), v, &p)?;
    }
    if let Some(v) = obj.get("queue_bytes") {
        c.queue_bytes = Some(pos_int(v, &format!("{}queue_bytes", p))?);
    }
    if let Some(v) = obj.get("queue_packets") {
        c.queue_packets = Some(pos_int(v, &format!("{}queue_packets", p))?);
    }
    if let Some(v) = obj.get("outages") {
        let f = format!("{}outages", p);
        let arr = v.as_array().ok_or_else(|| format!("{}: must be a list of [down_s, up_s]", f))?;
        for (i, w) in arr.iter().enumerate() {
            let fi = format!("{}[{}]", f, i);
            let pair = w.as_array().filter(|a| a.len() == 2).ok_or_else(|| format!("{}: must be [down_s, up_s]", fi))?;
            let a = num(&pair[0], &fi, 0.0, 1e9)?;
            let b = num(&pair[1], &fi, 0.0, 1e9)?;
            if b <= a {
                return err(&fi, "up_s must be greater than down_s");
            }
            c.outages.push(((a * 1e9).round() as i64, (b * 1e9).round() as i64));
        }
    }
    Ok(c)
}

pub fn parse(text: &str, config_dir: Option<&Path>) -> R<Config> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("config: invalid JSON: {}", e))?;
    let obj = v.as_object().ok_or("config: must be a JSON object")?;
    check_keys(obj, "", &["seed", "down", "up"])?;
    let seed = match obj.get("seed") {
        None => 1,
        Some(s) => s.as_u64().ok_or("seed: must be a non-negative integer")?,
    };
    let down = match obj.get("down") {
        Some(d) => parse_dir(d, "down", config_dir)?,
        None => DirConfig::default(),
    };
    let up = match obj.get("up") {
        Some(d) => parse_dir(d, "up", config_dir)?,
        None => DirConfig::default(),
    };
    Ok(Config { seed, down, up })
}

pub fn load(path: &Path) -> R<Config> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("config: cannot read {}: {}", path.display(), e))?;
    parse(&text, path.parent())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn full_example() {
        let c = parse(
            r#"{"seed": 3, "down": {"delay_ms": 15, "jitter_ms": 1, "reorder": false,
                "loss": {"model": "bernoulli", "p": 0.01}, "rate_mbit": 20, "queue_bytes": 150000,
                "outages": [[10.0, 12.5]]},
               "up": {"delay_ms": 15, "loss": {"model": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.3,
                "loss_good": 0.0, "loss_bad": 0.5}, "queue_packets": 100}}"#,
            None,
        )
        .unwrap();
        assert_eq!(c.seed, 3);
        assert_eq!(c.down.delay_ns, 15_000_000);
        assert_eq!(c.down.outages, vec![(10_000_000_000, 12_500_000_000)]);
        assert_eq!(c.up.queue_packets, Some(100));
        assert!(matches!(c.down.rate, Rate::Fixed(r) if r == 20e6));
        assert!(parse("{}", None).is_ok());
        assert!(c.down.llr.is_none());
        let c = parse(r#"{"down": {"loss": {"model": "bernoulli", "p": 0.05}, "llr": {"delay_ms": 8.5, "retries": 4}}}"#, None).unwrap();
        assert_eq!(c.down.llr, Some(Llr { delay_ns: 8_500_000, retries: 4 }));
        assert!(c.up.llr.is_none());
        // p = 0 is a loss model: llr never acts, but the config is valid (a sweep over p)
        assert!(parse(r#"{"up": {"loss": {"model": "bernoulli", "p": 0}, "llr": {"delay_ms": 0, "retries": 1}}}"#, None).is_ok());
    }
    #[test]
    fn trace_offset_is_the_phase_modulo_the_period() {
        let dir = std::env::temp_dir().join(format!("linkem-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.trace"), "2\n2\n5\n9\n").unwrap(); // period 9 ms
        let text = r#"{"down": {"trace": "t.trace", "trace_offset_ms": 3}, "up": {"trace": "t.trace", "trace_offset_ms": 21}}"#;
        let c = parse(text, Some(&dir)).unwrap();
        let off = |r: &Rate| match r {
            Rate::Trace(t) => t.offset_ms(),
            _ => panic!("not a trace"),
        };
        assert_eq!((off(&c.down.rate), off(&c.up.rate)), (3, 21 % 9));
        let c = parse(r#"{"down": {"trace": "t.trace"}}"#, Some(&dir)).unwrap();
        assert_eq!(off(&c.down.rate), 0);
        for bad in [r#"-1"#, r#"2.5"#, r#""random""#] {
            let e = parse(&format!(r#"{{"down": {{"trace": "t.trace", "trace_offset_ms": {}}}}}"#, bad), Some(&dir)).unwrap_err();
            assert!(e.starts_with("down.trace_offset_ms: must be a non-negative integer"), "{bad}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"down": {"rate_mbit": 1, "trace": "x"}}"#, "down.rate_mbit"),
            (r#"{"up": {"delay_ms": -1}}"#, "up.delay_ms"),
            (r#"{"up": {"dealy_ms": 1}}"#, "up.dealy_ms"),
            (r#"{"up": {"loss": {"model": "bernoulli", "p": 2}}}"#, "up.loss.p"),
            (r#"{"up": {"loss": {"model": "foo"}}}"#, "up.loss.model"),
            (r#"{"down": {"outages": [[3, 2]]}}"#, "down.outages[0]"),
            (r#"{"down": {"queue_bytes": 0}}"#, "down.queue_bytes"),
            (r#"{"down": {"trace": "/nonexistent.trace"}}"#, "down.trace"),
            (r#"{"seed": -1}"#, "seed"),
            (r#"{"sideways": {}}"#, "sideways"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": {"delay_ms": -1, "retries": 2}}}"#, "down.llr.delay_ms"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": {"delay_ms": 8, "retries": 0}}}"#, "down.llr.retries"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": {"delay_ms": 8, "retries": 2.5}}}"#, "down.llr.retries"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": {"delay_ms": 8, "retries": 5000}}}"#, "down.llr.retries"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": {"delay_ms": 8}}}"#, "down.llr.retries"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": {"retries": 2}}}"#, "down.llr.delay_ms"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": {"delay_ms": 8, "tries": 2}}}"#, "down.llr.tries"),
            (r#"{"down": {"loss": {"model": "bernoulli", "p": 0.1}, "llr": 3}}"#, "down.llr"),
            (r#"{"up": {"llr": {"delay_ms": 8, "retries": 2}}}"#, "up.llr"),
            (r#"{"up": {"loss": {"model": "none"}, "llr": {"delay_ms": 8, "retries": 2}}}"#, "up.llr"),
            (r#"{"down": {"trace_offset_ms": 5}}"#, "down.trace_offset_ms"),
            (r#"{"down": {"rate_mbit": 5, "trace_offset_ms": 5}}"#, "down.trace_offset_ms"),
        ];
        for (text, field) in cases {
            let e = parse(text, None).unwrap_err();
            assert!(e.starts_with(field), "{text}: {e}");
        }
    }
}
