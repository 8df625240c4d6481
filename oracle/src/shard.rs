//! Which shard of a sweep or fuzz run this process runs: `--shard I/N`, or
//! when that is not given, the environment of the batch scheduler that
//! started it.
//!
//! Owns parsing `I/N` and reading the scheduler variables, in this order:
//!
//! | scheduler | index | count |
//! |---|---|---|
//! | any (explicit) | `ORACLE_SHARD_INDEX` | `ORACLE_SHARD_COUNT` |
//! | Slurm job array | `SLURM_ARRAY_TASK_ID` minus `SLURM_ARRAY_TASK_MIN` (0 when unset) | `SLURM_ARRAY_TASK_COUNT` |
//! | Kubernetes indexed Job | `JOB_COMPLETION_INDEX` | `ORACLE_SHARD_COUNT` (set it to the Job's `completions`) |
//!
//! It must not decide which programs a shard holds (program `i` belongs to
//! shard `i % N`: that is the sweep's and the fuzzer's rule).

/// A shard: programs `i` with `i % count == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShardSpec {
    pub index: u64,
    pub count: u64,
}

/// The shard to run and, when it came from the environment, a note naming
/// the variables (printed on stderr).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ShardSel {
    pub shard: Option<ShardSpec>,
    pub note: Option<String>,
}

/// Parses "I/N" (0 <= I < N).
pub fn parse(s: &str) -> Result<ShardSpec, String> {
    let bad = || format!("--shard `{s}`: expected I/N, need 0 <= I < N (e.g. 0/4)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse::<u64>().map_err(|_| bad())?,
        n.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok(ShardSpec { index: i, count: n })
}

impl ShardSel {
    /// `--shard` when given, else the environment of this process.
    pub fn resolve(given: Option<&str>) -> Result<ShardSel, String> {
        ShardSel::resolve_with(given, &|k| std::env::var(k).ok())
    }

    /// As [`ShardSel::resolve`], reading variables through `var` (tests).
    pub fn resolve_with(
        given: Option<&str>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ShardSel, String> {
        if let Some(s) = given {
            return Ok(ShardSel {
                shard: Some(parse(s)?),
                note: None,
            });
        }
        let num = |k: &str| -> Result<Option<u64>, String> {
            match var(k) {
                None => Ok(None),
                Some(v) if v.trim().is_empty() => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .map(Some)
                    .map_err(|_| format!("{k}=`{v}`: not a number")),
            }
        };
        let pick = |index: u64, count: u64, vars: &str| -> Result<ShardSel, String> {
            if count == 0 || index >= count {
                return Err(format!(
                    "shard {index}/{count} from {vars}: expected 0 <= index < count"
                ));
            }
            Ok(ShardSel {
                shard: Some(ShardSpec { index, count }),
                note: Some(format!("shard {index}/{count} from {vars}")),
            })
        };
        if let (Some(i), Some(n)) = (num("ORACLE_SHARD_INDEX")?, num("ORACLE_SHARD_COUNT")?) {
            return pick(i, n, "ORACLE_SHARD_INDEX/ORACLE_SHARD_COUNT");
        }
        if let (Some(id), Some(n)) = (num("SLURM_ARRAY_TASK_ID")?, num("SLURM_ARRAY_TASK_COUNT")?) {
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let i = id.checked_sub(min).ok_or_else(|| {
                format!("SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}")
            })?;
            return pick(i, n, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT");
        }
        if let Some(i) = num("JOB_COMPLETION_INDEX")? {
            let n = num("ORACLE_SHARD_COUNT")?.ok_or_else(|| {
                "JOB_COMPLETION_INDEX is set but ORACLE_SHARD_COUNT is not: set it to the \
                 Job's completions (or pass --shard I/N)"
                    .to_string()
            })?;
            return pick(i, n, "JOB_COMPLETION_INDEX/ORACLE_SHARD_COUNT");
        }
        Ok(ShardSel::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn explicit_then_environment() {
        let s = |i, n| Some(ShardSpec { index: i, count: n });
        assert_eq!(
            ShardSel::resolve_with(Some("1/4"), &env(&[]))
                .unwrap()
                .shard,
            s(1, 4)
        );
        assert!(ShardSel::resolve_with(Some("4/4"), &env(&[])).is_err());
        assert!(ShardSel::resolve_with(Some("x"), &env(&[])).is_err());
        assert_eq!(
            ShardSel::resolve_with(None, &env(&[])).unwrap(),
            ShardSel::default()
        );
        let slurm = ShardSel::resolve_with(
            None,
            &env(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ]),
        )
        .unwrap();
        assert_eq!(slurm.shard, s(3, 4));
        assert!(slurm.note.unwrap().contains("SLURM_ARRAY_TASK_ID"));
        // --array=1-4: ids 1..4 become shards 0..3.
        let one_based = env(&[
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            ShardSel::resolve_with(None, &one_based).unwrap().shard,
            s(0, 4)
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2"), ("ORACLE_SHARD_COUNT", "8")]);
        assert_eq!(ShardSel::resolve_with(None, &k8s).unwrap().shard, s(2, 8));
        assert!(ShardSel::resolve_with(None, &env(&[("JOB_COMPLETION_INDEX", "2")])).is_err());
        assert!(ShardSel::resolve_with(
            None,
            &env(&[
                ("SLURM_ARRAY_TASK_ID", "5"),
                ("SLURM_ARRAY_TASK_COUNT", "4")
            ])
        )
        .is_err());
        // --shard wins over the environment.
        assert_eq!(
            ShardSel::resolve_with(Some("0/2"), &k8s).unwrap().shard,
            s(0, 2)
        );
    }
}
