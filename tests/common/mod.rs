//! Helpers shared by the command-line tests.

use std::process::{Command, Output};

/// Runs the `fabricopt` binary from the crate root.
pub fn fabricopt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fabricopt"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs")
}

pub fn json(args: &[&str]) -> serde_json::Value {
    let out = fabricopt(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Runs a command that must fail: non-zero exit, no panic, exactly one line on stderr.
pub fn error_line(args: &[&str]) -> String {
    let out = fabricopt(args);
    assert!(!out.status.success(), "{args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    stderr.trim_end().to_string()
}
