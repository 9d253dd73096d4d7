//! Two processes of the `rollback` example, peers in a GGRS session over UDP
//! on loopback with simulated latency and jitter: both end on the same
//! physics checksum, and the late inputs made them roll back.

#![cfg(all(feature = "ggrs", feature = "render"))]

mod lab;

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// `target/<profile>/examples/rollback`, built by `cargo test`.
fn example_binary() -> PathBuf {
    lab::example_binary("rollback", &["examples/rollback.rs"])
}

struct Report {
    checksum: String,
    rollbacks: u64,
}

fn parse(output: &str) -> Report {
    let field = |name: &str| {
        output
            .lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
            .unwrap_or_else(|| panic!("no `{name}` in:\n{output}"))
    };
    Report {
        checksum: field("checksum:"),
        rollbacks: field("rollbacks:").parse().expect("a count"),
    }
}

#[test]
fn two_peers_agree_on_the_checksum_after_rollbacks() {
    let binary = example_binary();
    let base = 20_000 + (std::process::id() % 20_000) as u16;
    let (a, b) = (base, base + 1);
    let spawn = |local: u16, remote: u16| {
        Command::new(&binary)
            .args([
                "--headless",
                "--local-port",
                &local.to_string(),
                "--remote",
                &format!("127.0.0.1:{remote}"),
                "--frames",
                "300",
                "--latency",
                "50",
                "--jitter",
                "40",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the example starts")
    };
    let first = spawn(a, b);
    let second = spawn(b, a);
    let outputs = [first, second].map(|child| {
        let out = child.wait_with_output().expect("the example runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "peer failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        parse(&stdout)
    });
    assert_eq!(outputs[0].checksum, outputs[1].checksum);
    assert!(
        outputs[0].rollbacks + outputs[1].rollbacks >= 1,
        "late inputs should have caused rollbacks"
    );
}

#[test]
fn bad_arguments_print_the_usage() {
    let out = Command::new(example_binary())
        .args(["--local-port", "nope"])
        .output()
        .expect("the example runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: rollback"));
}
