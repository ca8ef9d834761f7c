//! What one benchmarked call costs: wall time, the CPU time of the calling thread (the benchmark
//! runs on a current-thread runtime, so the host's work — wasmtime, the HTTP client — happens on
//! that thread), and the CPU time of the whole process but the in-process mock's server thread
//! (whatever the host does on other threads counts there).

use std::time::{Duration, Instant};

/// CPU time consumed by the calling thread so far.
pub fn thread_cpu() -> Duration {
    cpu(&rusage(libc::RUSAGE_THREAD))
}

/// CPU time consumed by the whole process so far.
pub fn process_cpu() -> Duration {
    cpu(&rusage(libc::RUSAGE_SELF))
}

/// Peak resident set size of the process, in bytes.
pub fn peak_rss() -> u64 {
    rusage(libc::RUSAGE_SELF).ru_maxrss as u64 * 1024
}

fn rusage(who: libc::c_int) -> libc::rusage {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a full `rusage` into the pointer it is given and cannot fail for
    // RUSAGE_SELF or RUSAGE_THREAD on Linux.
    unsafe {
        libc::getrusage(who, usage.as_mut_ptr());
        usage.assume_init()
    }
}

/// User plus system time.
fn cpu(usage: &libc::rusage) -> Duration {
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Samples of one scenario.
pub struct Samples<'a> {
    pub wall: Vec<Duration>,
    pub cpu: Vec<Duration>,
    pub process_cpu: Vec<Duration>,
    /// The CPU time of what is in the process but not measured (the mock's server thread).
    excluded: &'a dyn Fn() -> Duration,
}

impl<'a> Samples<'a> {
    /// Samples whose process CPU leaves out `excluded`'s.
    pub fn excluding(excluded: &'a dyn Fn() -> Duration) -> Self {
        Samples {
            wall: Vec::new(),
            cpu: Vec::new(),
            process_cpu: Vec::new(),
            excluded,
        }
    }

    /// Times `call` once.
    pub async fn time<T>(&mut self, call: impl AsyncFnOnce() -> T) -> T {
        let (wall, cpu) = (Instant::now(), thread_cpu());
        let (process, excluded) = (process_cpu(), (self.excluded)());
        let result = call().await;
        let excluded = (self.excluded)().saturating_sub(excluded);
        self.process_cpu
            .push((process_cpu() - process).saturating_sub(excluded));
        self.cpu.push(thread_cpu() - cpu);
        self.wall.push(wall.elapsed());
        result
    }

    pub fn summary(&self) -> Summary {
        Summary {
            calls: self.wall.len(),
            wall_p50: percentile(&self.wall, 50.0),
            wall_p99: percentile(&self.wall, 99.0),
            cpu_mean: mean(&self.cpu),
            cpu_p50: percentile(&self.cpu, 50.0),
            process_cpu_mean: mean(&self.process_cpu),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub calls: usize,
    pub wall_p50: Duration,
    pub wall_p99: Duration,
    pub cpu_mean: Duration,
    pub cpu_p50: Duration,
    /// The whole process's CPU per call, the mock's server thread left out.
    pub process_cpu_mean: Duration,
}

pub fn percentile(samples: &[Duration], percent: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((percent / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

pub fn mean(samples: &[Duration]) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    samples.iter().sum::<Duration>() / samples.len() as u32
}

/// Milliseconds with three decimals, for tables.
pub fn ms(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}
