//! tb-llguidance: llguidance (../shared/llguidance: llguidance 1.8.0 at
//! c75b0d90, derivre 0.3.12) as a live reference engine for tokbench's
//! MaskBench driver (experiments/drivers/drv_maskbench.c, option
//! llguidance=N), beside XGrammar (scripts/ref/xgrammar.js).  Built by
//! `make llguidance-ref` into build/llguidance/target/release/.
//!
//!   tb-llguidance maskbench --tokens TOKENS --eos ID [--timeout S] [--masks]
//!                 [--from K] JOBS
//!
//! Tokenization is tokbench's: the driver tokenizes every instance (Python's
//! json.dumps, then Llama 3 without special tokens, as it feeds its own
//! engine) and passes the ids, so that both engines see the same tokens;
//! llguidance never tokenizes.  TOKENS: the vocabulary, line i the bytes of
//! token i in hex (a control token starts with ff, toktrie's mark of a
//! special token, so grammars never allow it; an empty line: no bytes).
//! ID: the end-of-sequence token (the driver passes the vocabulary's eos,
//! Llama 3's <|end_of_text|> 128001), which llguidance allows where the
//! text may end; which control token it is changes no other id's verdict.  JOBS: one JSON line per schema,
//!   {"file": PATH, "instances": [{"index": K, "valid": B, "ids": [...]}]}
//! PATH a MaskBench file, whose "schema" is compiled (property order kept);
//! or, for a grammar of the engines' test suites (tests/test_llg_masks.c),
//!   {"name": NAME, "lark": TEXT, "instances": [...]}
//! TEXT a grammar in llguidance's Lark dialect (TopLevelGrammar::from_lark),
//! NAME what its output line's "file" says.
//!
//! The settings that matched tokbench's driver (../shared/llguidance's
//! README): ApproximateTokEnv over the token bytes with
//! TokRxInfo::new(size, ID) (non-canonical: masks are always whole), a
//! ParserFactory with default InferenceCapabilities and the general slices,
//! default ParserLimits, TopLevelGrammar::from_json_schema with default
//! JsonCompileOptions: Python's LLMatcher(tok, {"grammars": [{"json_schema":
//! schema}]}).
//!
//! The protocol is the driver's: TTFM is the parser's creation (the schema's
//! compile) and the first mask; the instances then run in turn on the same
//! matcher, reset to the start between them, a mask before each token (one
//! TBM sample; instance 0's first mask is TTFM's), the token checked against
//! it and consumed; after the last the end must be accepting.  Each time is
//! taken as wall time and as the thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
//! read in the driver's order (CPU clock, wall clock, work, wall clock, CPU
//! clock) with the least cost of an empty region taken off the CPU time.
//! llguidance keeps its bias cache: a mask whose lexer state has not changed
//! since the last one is reused, as in a real decoding loop.
//!
//! One JSON line per schema on stdout, the fields of xgrammar.js maskbench:
//!   {"file", "outcome", "ttfm_us", "ttfm_cpu_us", "tokens", "tbm_us": [...],
//!    "tbm_cpu_us": [...], "warnings": [...], "error",
//!    "instances": [{"index", "valid", "tokens", "at", "token", "outcome"}]}
//! outcome: pass, compile_error (the parser could not be made), crash (a
//! mask llguidance could not compute, a panic), timeout, bad_input (the file
//! is not a MaskBench file), validation_error, invalidation_error (a
//! validation error wins).  "at": the refused token's index ("token" its
//! id), or the token count when the end is not accepting, or null.  With
//! --masks each instance also has "masks", llguidance's mask before each of
//! its tokens up to the refused one, in xgrammar.js's hex (the bitmask's
//! 32-bit words, word 0 first, 8 digits each, most significant first), and
//! "ids".
//!
//! --timeout S (default 60) bounds each schema: it runs on a thread of its
//! own, and when it overruns, its line says timeout (with the instances
//! done) and the program starts itself again from the next job (--from
//! K+1, the same stdout), since a thread cannot be stopped.  Errors in the
//! arguments, TOKENS or JOBS name the file and line and exit 2.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use llguidance::api::TopLevelGrammar;
use llguidance::earley::SlicedBiasComputer;
use llguidance::{Matcher, ParserFactory};
use serde_json::{json, Value};
use toktrie::{ApproximateTokEnv, InferenceCapabilities, SimpleVob, TokEnv, TokRxInfo, TokTrie};

struct Args {
    tokens: String,
    eos: u32,
    timeout: u64,
    masks: bool,
    from: usize,
    jobs: String,
}

fn die(msg: &str) -> ! {
    eprintln!("tb-llguidance: {msg}");
    std::process::exit(2);
}

fn usage() -> ! {
    die("usage: tb-llguidance maskbench --tokens FILE --eos ID [--timeout S] [--masks] \
         [--from K] JOBS")
}

fn parse_args() -> Args {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) != Some("maskbench") {
        usage();
    }
    let mut a = Args { tokens: String::new(), eos: u32::MAX, timeout: 60, masks: false,
                       from: 0, jobs: String::new() };
    let mut i = 1;
    while i < argv.len() {
        let value = |i: usize| argv.get(i + 1).cloned().unwrap_or_else(|| usage());
        let number = |i: usize| {
            value(i).parse::<u64>().unwrap_or_else(|_| die(&format!("{}: not a number", argv[i])))
        };
        match argv[i].as_str() {
            "--tokens" => { a.tokens = value(i); i += 1; }
            "--eos" => { a.eos = number(i) as u32; i += 1; }
            "--timeout" => { a.timeout = number(i).max(1); i += 1; }
            "--from" => { a.from = number(i) as usize; i += 1; }
            "--masks" => a.masks = true,
            s if !s.starts_with("--") && a.jobs.is_empty() => a.jobs = s.to_string(),
            _ => usage(),
        }
        i += 1;
    }
    if a.tokens.is_empty() || a.jobs.is_empty() || a.eos == u32::MAX {
        usage();
    }
    a
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// The token environment over the bytes of TOKENS.
fn token_env(path: &str, eos: u32) -> TokEnv {
    let f = std::fs::File::open(path).unwrap_or_else(|e| die(&format!("{path}: {e}")));
    let mut words = Vec::new();
    for (n, line) in BufReader::new(f).lines().enumerate() {
        let line = line.unwrap_or_else(|e| die(&format!("{path}: {e}")));
        words.push(unhex(line.trim_end())
            .unwrap_or_else(|| die(&format!("{path}:{}: not hex bytes", n + 1))));
    }
    if eos as usize >= words.len() {
        die(&format!("--eos {eos}: past the {} tokens of {path}", words.len()));
    }
    let info = TokRxInfo::new(words.len() as u32, eos);
    Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)))
}

fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

/// A timed region: wall and thread CPU time in us, the clocks read in the
/// driver's order so that the wall time leaves out the CPU clock's reads.
struct Region {
    cpu0: f64,
    wall0: Instant,
}

impl Region {
    fn start() -> Region {
        let cpu0 = thread_cpu_ns();
        Region { cpu0, wall0: Instant::now() }
    }

    /// (wall, cpu) in us, the CPU time less `over` ns.
    fn stop(&self, over: f64) -> (f64, f64) {
        let wall = self.wall0.elapsed().as_nanos() as f64;
        let cpu = thread_cpu_ns() - self.cpu0 - over;
        (round3(wall / 1e3), round3(cpu.max(0.0) / 1e3))
    }
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

/// The least CPU time an empty region measures (the driver's
/// cpu_ns_overhead), taken off every region's.
fn cpu_overhead() -> f64 {
    (0..101).map(|_| { let r = Region::start(); thread_cpu_ns() - r.cpu0 })
        .fold(f64::INFINITY, f64::min)
}

fn mask_hex(m: &SimpleVob, size: usize) -> String {
    m.as_slice()[..size.div_ceil(32)].iter().map(|w| format!("{w:08x}")).collect()
}

struct Instance {
    index: u64,
    valid: bool,
    ids: Vec<u32>,
}

/// What a schema's thread reports, in order.
enum Msg {
    Compiled { ttfm: (f64, f64), warnings: Vec<String> },
    CompileError(String),
    Instance(Value, Vec<(f64, f64)>),
    Crash(String),
    Done,
}

/// One schema on its thread: compile, first mask, the instances.
fn run_schema(factory: &ParserFactory, grammar: TopLevelGrammar, instances: &[Instance],
              masks: bool, over: f64, tx: &mpsc::Sender<Msg>) {
    let size = factory.tok_env().tok_trie().vocab_size();
    let region = Region::start();
    let parser = factory.create_parser(grammar);
    if let Err(e) = &parser {
        let _ = tx.send(Msg::CompileError(e.to_string()));
        return;
    }
    let mut m = Matcher::new(parser);
    let first = match m.compute_mask() {
        Ok(mask) => mask,
        Err(e) => {
            let _ = tx.send(Msg::Crash(format!("first mask: {e}")));
            return;
        }
    };
    let ttfm = region.stop(over);
    let _ = tx.send(Msg::Compiled { ttfm, warnings: m.grammar_warnings() });
    for (n, inst) in instances.iter().enumerate() {
        let mut tbm = Vec::new();
        let mut hex = Vec::new();
        let mut at = None;
        if let Err(e) = m.reset() {
            let _ = tx.send(Msg::Crash(format!("instance {}: reset: {e}", inst.index)));
            return;
        }
        for (k, &id) in inst.ids.iter().enumerate() {
            let mask = if n == 0 && k == 0 {
                first.clone()
            } else {
                let r = Region::start();
                let mask = m.compute_mask_or_eos();
                tbm.push(r.stop(over));
                match mask {
                    Ok(mask) => mask,
                    Err(e) => {
                        let _ = tx.send(Msg::Crash(format!("instance {}, before token {k}: {e}",
                                                           inst.index)));
                        return;
                    }
                }
            };
            if masks {
                hex.push(mask_hex(&mask, size));
            }
            if (id as usize) >= size || !mask.is_allowed(id) {
                at = Some(k);
                break;
            }
            if let Err(e) = m.consume_token(id) {
                let _ = tx.send(Msg::Crash(format!("instance {}, token {k}: {e}", inst.index)));
                return;
            }
        }
        if at.is_none() && !m.is_accepting().unwrap_or(false) {
            at = Some(inst.ids.len());
        }
        let refused = at.is_some();
        let mut v = json!({
            "index": inst.index, "valid": inst.valid, "tokens": inst.ids.len(), "at": at,
            "token": at.and_then(|k| inst.ids.get(k)),
            "outcome": if inst.valid != refused { "pass" }
                       else if inst.valid { "validation_error" } else { "invalidation_error" },
        });
        if masks {
            v["masks"] = json!(hex);
            v["ids"] = json!(inst.ids);
        }
        let _ = tx.send(Msg::Instance(v, tbm));
    }
    let _ = tx.send(Msg::Done);
}

/// A job line: its grammar (the MaskBench file's schema, or the Lark text)
/// and the instances' ids; Err: what makes the job unusable (bad_input).
fn read_job(job: &Value) -> Result<(TopLevelGrammar, Vec<Instance>), String> {
    let grammar = if let Some(lark) = job["lark"].as_str() {
        TopLevelGrammar::from_lark(lark.to_string())
    } else {
        let path = job["file"].as_str().ok_or("the job names no file and no lark grammar")?;
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        let mut file: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
        let schema = file.get_mut("schema").map(Value::take)
            .ok_or_else(|| format!("{path}: no \"schema\""))?;
        TopLevelGrammar::from_json_schema(schema)
    };
    let mut out = Vec::new();
    for inst in job["instances"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        let ids = inst["ids"].as_array().ok_or("an instance without ids")?;
        out.push(Instance {
            index: inst["index"].as_u64().unwrap_or(0),
            valid: inst["valid"].as_bool().unwrap_or(false),
            ids: ids.iter().map(|x| x.as_u64().unwrap_or(u64::MAX).min(u32::MAX as u64) as u32)
                .collect(),
        });
    }
    Ok((grammar, out))
}

/// Runs one job under the time limit and prints its line; false when it
/// timed out (its thread still runs).
fn run_job(factory: &Arc<ParserFactory>, job: &Value, a: &Args, over: f64) -> bool {
    let base = job["file"].as_str().or(job["name"].as_str()).unwrap_or("?");
    let base = base.rsplit('/').next().unwrap_or(base);
    let mut out = json!({
        "file": base, "outcome": "pass", "ttfm_us": null, "ttfm_cpu_us": null, "tokens": 0,
        "tbm_us": [], "tbm_cpu_us": [], "warnings": [], "error": null, "instances": [],
    });
    let (grammar, instances) = match read_job(job) {
        Ok(x) => x,
        Err(e) => {
            out["outcome"] = json!("bad_input");
            out["error"] = json!(e);
            println!("{out}");
            return true;
        }
    };
    let (tx, rx) = mpsc::channel();
    let f = Arc::clone(factory);
    let masks = a.masks;
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_schema(&f, grammar, &instances, masks, over, &tx)
        }));
        if r.is_err() {
            let _ = tx.send(Msg::Crash("llguidance panicked".into()));
        }
    });
    let deadline = Instant::now() + Duration::from_secs(a.timeout);
    let mut finished = true;
    let (mut tbm, mut tbm_cpu, mut insts) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Msg::Compiled { ttfm, warnings }) => {
                out["ttfm_us"] = json!(ttfm.0);
                out["ttfm_cpu_us"] = json!(ttfm.1);
                out["warnings"] = json!(warnings);
            }
            Ok(Msg::CompileError(e)) => {
                out["outcome"] = json!("compile_error");
                out["error"] = json!(e);
                break;
            }
            Ok(Msg::Instance(v, times)) => {
                for (w, c) in times {
                    tbm.push(w);
                    tbm_cpu.push(c);
                }
                insts.push(v);
            }
            Ok(Msg::Crash(e)) => {
                out["outcome"] = json!("crash");
                out["error"] = json!(e);
                break;
            }
            Ok(Msg::Done) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                out["outcome"] = json!("timeout");
                out["error"] = json!(format!("not done within {} s", a.timeout));
                finished = false;
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                out["outcome"] = json!("crash");
                out["error"] = json!("the schema's thread ended without a result");
                break;
            }
        }
    }
    if out["outcome"] == "pass" {
        let has = |o: &str| insts.iter().any(|v| v["outcome"] == o);
        if has("validation_error") {
            out["outcome"] = json!("validation_error");
        } else if has("invalidation_error") {
            out["outcome"] = json!("invalidation_error");
        }
    }
    out["tokens"] = json!(tbm.len());
    out["tbm_us"] = json!(tbm);
    out["tbm_cpu_us"] = json!(tbm_cpu);
    out["instances"] = json!(insts);
    println!("{out}");
    finished
}

/// A small schema compiled and run, so that TTFM leaves out the first
/// touch of llguidance's code and lazily made tables.
fn warm_up(factory: &ParserFactory) {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    if let Ok(p) = factory.create_parser(TopLevelGrammar::from_json_schema(schema)) {
        let mut m = Matcher::new(Ok(p));
        let _ = m.compute_mask();
    }
}

fn main() {
    let a = parse_args();
    let env = token_env(&a.tokens, a.eos);
    let mut factory = ParserFactory::new(&env, InferenceCapabilities::default(),
                                         &SlicedBiasComputer::general_slices())
        .unwrap_or_else(|e| die(&format!("llguidance's parser factory: {e}")));
    factory.quiet();
    let factory = Arc::new(factory);
    let text = std::fs::read_to_string(&a.jobs).unwrap_or_else(|e| die(&format!("{}: {e}", a.jobs)));
    let jobs: Vec<Value> = text.lines().enumerate().filter(|(_, l)| !l.is_empty())
        .map(|(n, l)| serde_json::from_str(l)
            .unwrap_or_else(|e| die(&format!("{}:{}: {e}", a.jobs, n + 1))))
        .collect();
    warm_up(&factory);
    let over = cpu_overhead();
    for (k, job) in jobs.iter().enumerate().skip(a.from) {
        if !run_job(&factory, job, &a, over) {
            // The overrunning thread cannot be stopped: the rest runs in a
            // fresh process on the same stdout.
            let _ = std::io::stdout().flush();
            let mut args: Vec<String> = std::env::args().skip(1).collect();
            if let Some(i) = args.iter().position(|x| x == "--from") {
                args.drain(i..i + 2);
            }
            args.extend(["--from".to_string(), (k + 1).to_string()]);
            let exe = std::env::current_exe().unwrap_or_else(|e| die(&format!("itself: {e}")));
            let e = std::process::Command::new(exe).args(args).exec();
            die(&format!("starting again after a timeout: {e}"));
        }
    }
}
