//! Helpers shared by the command-line tests.

use std::process::{Command, Output};

/// Runs the `fabricopt` binary from the crate root.
pub(crate) fn fabricopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabricopt"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs")
}

pub(crate) fn json(args: &[&str]) -> serde_json::Value {
    let out = fabricopt(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Runs a command that must fail: non-zero exit, no panic, exactly one line on stderr.
pub(crate) fn error_line(args: &[&str]) -> String {
    let out = fabricopt(args);
    assert!(!out.status.success(), "{args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    stderr.trim_end().to_string()
}

/// [`fabricopt`], but kills the process and fails the test if it has not ended within
/// `seconds`: for commands that used to hang. Standard output is discarded (a full pipe
/// nobody reads would block the child); standard error is returned.
#[allow(dead_code)]
pub(crate) fn fabricopt_within(args: &[&str], seconds: u64) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fabricopt"));
    command.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    run_within(command, seconds)
}

/// Runs `command` as [`fabricopt_within`] runs the binary: killed, and the test failed, if it
/// has not ended within `seconds`; standard output discarded, standard error returned.
#[allow(dead_code)]
pub(crate) fn run_within(mut command: Command, seconds: u64) -> Output {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command runs");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > Duration::from_secs(seconds) {
            child.kill().ok();
            panic!("{command:?} did not end within {seconds} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}
