//! `corpus-dos` CLI: `list [DIR]` prints the built-in corpus (or an external
//! directory) with families and tags, ending with `corpus: N programs in F families`.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("list") => {
            let corpus = match args.get(1) {
                Some(dir) => corpus_dos::load_dir(Path::new(dir)).map_err(|e| e.to_string()),
                None => corpus_dos::builtin(),
            };
            let corpus = match corpus {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("corpus-dos: {e}");
                    return ExitCode::FAILURE;
                }
            };
            for p in &corpus.programs {
                println!(
                    "{:10} {:16} {:4} {:10} {}",
                    p.name,
                    p.family,
                    if p.timing_independent { "ti" } else { "td" },
                    p.budget,
                    p.tags.join(",")
                );
            }
            println!(
                "corpus: {} programs in {} families",
                corpus.programs.len(),
                corpus.families().len()
            );
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: corpus-dos list [DIR]");
            ExitCode::from(2)
        }
    }
}
