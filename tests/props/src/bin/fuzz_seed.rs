//! `make fuzz-seed`: writes generated inputs into the fuzz corpus (`tests/fuzz/corpus`, or the
//! directory given as the one argument), so that `make fuzz` starts each target from well-formed
//! module arguments and property strings. Inputs already there are kept (the corpus is in git,
//! with what the fuzzers added); the same seed always writes the same inputs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ferro_props::gen::{self, Rng};
use ferro_props::{fuzz_dir, seed, FORMATS, MODULES};

/// Inputs per module-arguments target, and for the property-string target.
const ARGS_PER_MODULE: usize = 40;
const PROPSTRINGS: usize = 140;
/// Seeds stay small: the fuzzers grow inputs themselves.
const MAX_INPUT: usize = 8192;

fn main() -> ExitCode {
    let corpus = std::env::args_os().nth(1).map_or_else(|| fuzz_dir().join("corpus"), PathBuf::from);
    match write_corpus(&corpus) {
        Ok(written) => {
            eprintln!("fuzz: {written} seed inputs written under {}", corpus.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("fuzz-seed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The number of inputs written. The generator draws every input, written or not, so each file
/// name always holds the same input.
fn write_corpus(corpus: &Path) -> Result<usize, String> {
    let mut rng = Rng::new(seed());
    let mut written = 0;
    for module in MODULES {
        let dir = target_dir(corpus, &format!("args_{}", module.name()))?;
        for i in 0..ARGS_PER_MODULE {
            // The first byte picks whether the fuzz target sets the PROXMOX_* environment.
            let mut data = vec![(i % 2) as u8];
            data.extend(gen::module_args(&mut rng, module).into_bytes());
            written += usize::from(write_new(&dir.join(format!("seed-{i:03}")), &data)?);
        }
    }
    let dir = target_dir(corpus, "propstring")?;
    for i in 0..PROPSTRINGS {
        // The first byte picks the format.
        let f = rng.below(FORMATS.len());
        let mut data = vec![f as u8];
        data.extend(gen::propstring(&mut rng, FORMATS[f]).into_bytes());
        written += usize::from(write_new(&dir.join(format!("seed-{i:03}")), &data)?);
    }
    Ok(written)
}

fn target_dir(corpus: &Path, target: &str) -> Result<PathBuf, String> {
    let dir = corpus.join(target);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// Writes `data` to `path` unless the file exists or the input is too long; true if written.
fn write_new(path: &Path, data: &[u8]) -> Result<bool, String> {
    if data.len() >= MAX_INPUT || path.exists() {
        return Ok(false);
    }
    std::fs::write(path, data).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(true)
}
