//! Unit tests of `ranks.rs`: the hand-out of chunks and the message format.

use super::*;

#[test]
fn chunks_shrink_and_cover_the_batch() {
    // Two ranks of one thread: 100 items go in shrinking chunks, every item once.
    let mut remaining = 100;
    let mut sizes = Vec::new();
    while remaining > 0 {
        let len = chunk_len(remaining, 2, 1);
        sizes.push(len);
        remaining -= len;
    }
    assert_eq!(sizes.iter().sum::<usize>(), 100);
    assert_eq!(sizes[0], 25);
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
    assert_eq!(*sizes.last().unwrap(), 1);
    // A rank with 8 threads gets at least 8 items while that many are left.
    assert_eq!(chunk_len(20, 16, 8), 8);
    assert_eq!(chunk_len(5, 16, 8), 5);
}

#[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
struct Point {
    load: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    timeline: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    report: Option<serde_json::Value>,
    tail: Option<String>,
}

#[test]
fn messages_keep_skipped_fields_and_special_floats() {
    // A field left out before others (as `LoadPoint::timeline` before `routing_report`)
    // must not shift them; NaN and the infinities come back as they went.
    let points = vec![
        Point {
            load: f64::NAN,
            timeline: Vec::new(),
            report: Some(serde_json::json!({"decisions": 3})),
            tail: Some("x".into()),
        },
        Point {
            load: f64::INFINITY,
            timeline: vec![f64::NEG_INFINITY, -0.0, 1e-310],
            report: None,
            tail: None,
        },
    ];
    let back: Vec<Point> = decode(&encode(&points));
    assert!(back[0].load.is_nan());
    assert_eq!(back[0].report, points[0].report);
    assert_eq!(back[0].tail, points[0].tail);
    assert_eq!(back[1], points[1]);
    assert_eq!(back[1].timeline[1].to_bits(), (-0.0f64).to_bits());
}

#[test]
fn every_rank_gets_a_chunk_before_any_gets_two() {
    // As many items as ranks: one each, in one round.
    let (mut held, mut next) = (vec![0; 4], 0);
    let chunks = hand_out(&mut held, &mut next, 4, &[1; 4]);
    assert_eq!(chunks, vec![(0, 0, 1), (1, 1, 1), (2, 2, 1), (3, 3, 1)]);
    assert_eq!(held, vec![1; 4]);
    // 100 items on two ranks: a chunk each, then the second (prefetched) one each.
    let (mut held, mut next) = (vec![0; 2], 0);
    let chunks = hand_out(&mut held, &mut next, 100, &[1, 1]);
    assert_eq!(
        chunks,
        vec![(0, 0, 25), (1, 25, 19), (0, 44, 14), (1, 58, 11)]
    );
    assert_eq!((held, next), (vec![2, 2], 69));
    // A rank that returned a chunk gets the next, smaller one.
    let mut held = vec![1, 2];
    let chunks = hand_out(&mut held, &mut next, 100, &[1, 1]);
    assert_eq!(chunks, vec![(0, 69, 8)]);
}

/// A pipe (read end, write end) of this process.
fn pipe() -> (i32, i32) {
    let mut ends = [0; 2];
    // SAFETY: pipe writes two descriptors to the array, which holds two.
    assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
    (ends[0], ends[1])
}

#[test]
fn a_failing_rank_waits_until_the_launcher_has_read_its_message() {
    use std::time::Instant;
    let (read_end, write_end) = pipe();
    let message = b"fabricopt rank 2: error: out/checkpoint.json: Is a directory\n";
    // SAFETY: the pointer and length describe `message`.
    let written = unsafe { libc::write(write_end, message.as_ptr().cast(), message.len()) };
    assert_eq!(written, message.len() as isize);
    // The launcher reads the message 200 ms later: the rank waits for that, not longer.
    let reader = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let mut buffer = [0u8; 256];
        // SAFETY: the pointer and length describe `buffer`.
        unsafe { libc::read(read_end, buffer.as_mut_ptr().cast(), buffer.len()) }
    });
    let start = Instant::now();
    wait_until_read(write_end, Duration::from_secs(20));
    let waited = start.elapsed();
    assert_eq!(reader.join().unwrap(), message.len() as isize);
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    // Nobody reads: the wait ends at its limit.
    // SAFETY: as above.
    unsafe { libc::write(write_end, message.as_ptr().cast(), message.len()) };
    let start = Instant::now();
    wait_until_read(write_end, Duration::from_millis(100));
    assert!(start.elapsed() >= Duration::from_millis(100));
    // SAFETY: both descriptors are ours and closed once.
    unsafe {
        libc::close(read_end);
        libc::close(write_end);
    }
}

#[test]
fn a_failing_rank_whose_standard_error_is_a_file_does_not_wait() {
    use std::io::{Seek, Write};
    use std::os::fd::AsRawFd;
    // FIONREAD counts a file's bytes past the position: this one has some, so only the
    // pipe test stops the wait.
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(b"an earlier run's log\n").unwrap();
    file.rewind().unwrap();
    let start = std::time::Instant::now();
    wait_until_read(file.as_raw_fd(), Duration::from_secs(20));
    assert!(start.elapsed() < Duration::from_secs(20));
}
