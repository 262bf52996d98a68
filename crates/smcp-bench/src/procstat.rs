//! CPU time, resident memory and open file descriptors of a process from `/proc/<pid>`
//! (Linux only).
//!
//! `utime + stime` cover all threads of the process. The unit is the kernel clock tick
//! (`getconf CLK_TCK`, almost always 100 Hz), so a reading is only good to ~10 ms: rounds
//! must run long enough (≥ 1 s) for the per-request figure to mean anything.

use std::process::Command;

/// Parses `utime + stime` (in clock ticks) out of the text of `/proc/<pid>/stat`.
pub fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    // After the name: state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) flags(9)
    // minflt(10) cminflt(11) majflt(12) cmajflt(13) utime(14) stime(15).
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The CPU time `pid` has consumed so far, in microseconds.
pub fn cpu_time_us(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = parse_cpu_ticks(&stat)?;
    Some(ticks * 1_000_000 / clock_ticks_per_sec())
}

/// Parses `VmRSS` (in bytes) out of the text of `/proc/<pid>/status`.
pub fn parse_vm_rss(status: &str) -> Option<u64> {
    parse_status_kib(status, "VmRSS:")
}

/// Parses a field given in kB (e.g. `RssAnon:`, with its colon) out of the text of
/// `/proc/<pid>/status`, in bytes.
pub fn parse_status_kib(status: &str, field: &str) -> Option<u64> {
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The resident set size of `pid`, in bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    parse_vm_rss(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// The resident set of `pid` in bytes: all of it, its anonymous part (heap, stacks, written
/// data) and its file-backed part (code and read-only data mapped from the binary and its
/// libraries, shared with the page cache).
pub fn rss_parts(pid: u32) -> Option<RssParts> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some(RssParts {
        total: parse_vm_rss(&status)?,
        anon: parse_status_kib(&status, "RssAnon:")?,
        file: parse_status_kib(&status, "RssFile:")?,
    })
}

/// [`rss_parts`]: a process's resident set, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RssParts {
    /// `VmRSS`.
    pub total: u64,
    /// `RssAnon`.
    pub anon: u64,
    /// `RssFile`.
    pub file: u64,
}

/// How many file descriptors `pid` has open (entries of `/proc/<pid>/fd`).
pub fn open_fds(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

/// Parses the busy time of the whole machine (all CPUs, in clock ticks) out of the text of
/// `/proc/stat`: user + nice + system + irq + softirq + steal (idle and iowait excluded).
pub fn parse_system_busy_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    let get = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(get(0) + get(1) + get(2) + get(5) + get(6) + get(7))
}

/// Busy CPU time of the whole machine so far, in microseconds. Sampled around a round, minus
/// what the server and the load generator used, it shows how much *other* work (another
/// build, a noisy neighbour, hypervisor steal) competed with the benchmark.
pub fn system_busy_us() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    Some(parse_system_busy_ticks(&stat)? * 1_000_000 / clock_ticks_per_sec())
}

/// The kernel clock tick rate (`getconf CLK_TCK`), 100 if it cannot be read.
pub fn clock_ticks_per_sec() -> u64 {
    static TCK: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TCK.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .filter(|&t: &u64| t > 0)
            .unwrap_or(100)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_line_with_odd_name() {
        let line =
            "1234 (we ird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0 1 2 3";
        assert_eq!(parse_cpu_ticks(line), Some(300));
        assert_eq!(parse_cpu_ticks("garbage"), None);
    }

    #[test]
    fn parses_proc_stat() {
        let stat = "cpu  10 1 5 1000 7 2 3 4 0 0\ncpu0 5 0 2 500 3 1 1 2 0 0\n";
        assert_eq!(parse_system_busy_ticks(stat), Some(25));
        assert_eq!(parse_system_busy_ticks("intr 1 2"), None);
    }

    #[test]
    fn reads_own_cpu_time() {
        assert!(cpu_time_us(std::process::id()).is_some());
    }

    #[test]
    fn parses_vm_rss() {
        let status = "Name:\tsmcpd\nVmPeak:\t  9000 kB\nVmRSS:\t    1234 kB\nThreads:\t3\n";
        assert_eq!(parse_vm_rss(status), Some(1234 * 1024));
        assert_eq!(parse_vm_rss("Name: x\n"), None);
    }

    #[test]
    fn parses_rss_parts() {
        let status = "VmRSS:\t   16308 kB\nRssAnon:\t    1780 kB\nRssFile:\t   14528 kB\n";
        assert_eq!(parse_status_kib(status, "RssAnon:"), Some(1780 * 1024));
        assert_eq!(parse_status_kib(status, "RssFile:"), Some(14528 * 1024));
        assert_eq!(parse_status_kib(status, "RssShmem:"), None);
        let own = rss_parts(std::process::id()).unwrap();
        assert!(
            own.anon > 0 && own.file > 0 && own.total >= own.anon,
            "{own:?}"
        );
    }

    #[test]
    fn reads_own_rss_and_fds() {
        let me = std::process::id();
        assert!(rss_bytes(me).is_some_and(|b| b > 0));
        // Other tests of this process may open a file or two meanwhile: open many.
        let before = open_fds(me).unwrap();
        let files: Vec<_> = (0..16)
            .map(|_| std::fs::File::open("/proc/self/status").unwrap())
            .collect();
        assert!(open_fds(me).unwrap() >= before + 8);
        drop(files);
    }
}
