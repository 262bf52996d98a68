//! Running a benchmark's processes on a chosen CPU.

use std::path::Path;
use std::process::Command;

/// `bin` to run on `cpu` (through `taskset -c CPU`), or unpinned with `None`.
pub fn pinned(bin: &Path, cpu: Option<usize>) -> Command {
    match cpu {
        Some(cpu) => {
            let mut command = Command::new("taskset");
            command.arg("-c").arg(cpu.to_string()).arg(bin);
            command
        }
        None => Command::new(bin),
    }
}
