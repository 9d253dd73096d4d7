//! The windowed examples, run as a user runs them: each opens its window on
//! an X server (Xvfb, drawn by Mesa's software Vulkan), runs a fixed number
//! of frames at exactly 1/60 s of game time each, saves a screenshot with
//! Bevy's screenshot API and exits by itself (see `examples/support`). Each
//! test then checks its picture: not blank, and the scene where the physics
//! puts it.
//!
//! With `DISPLAY` set, the examples use that display. Otherwise each test
//! starts its own `Xvfb` (package `xvfb`); without one the tests are
//! skipped with a message, except under `CI=true`, where they fail.
//! Screenshots are kept in `target/screenshots/`.

mod lab;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bevy::color::{Color, ColorToPacked, Luminance, Srgba};
use bevy::math::Vec3;
use bevy_euler_physics::prelude::{Rope, RopeEnd};
use image::RgbImage;

/// Window size of every example.
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 720;
/// The examples' clear colour.
const BACKGROUND: Color = Color::srgb(0.08, 0.09, 0.12);
/// How long an example may take to draw its frames and exit.
const LIMIT: Duration = Duration::from_secs(300);

/// One example at a time: they share two cores and a software renderer.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// An X display for one example run: the caller's, or an Xvfb of our own
/// (with its display number), stopped on drop.
struct Display {
    name: String,
    server: Option<(Child, u32)>,
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some((server, number)) = &mut self.server {
            let _ = server.kill();
            let _ = server.wait();
            // Killed, it leaves its socket and lock behind.
            let _ = std::fs::remove_file(socket(*number));
            let _ = std::fs::remove_file(lock(*number));
        }
    }
}

/// Where X server `number` listens, and its lock file.
fn socket(number: u32) -> String {
    format!("/tmp/.X11-unix/X{number}")
}
fn lock(number: u32) -> String {
    format!("/tmp/.X{number}-lock")
}

/// Where the screenshots, the examples' logs and Xvfb's log go (made if
/// missing).
fn folder() -> PathBuf {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

/// How long an Xvfb may take to say it is ready, and how many are tried.
const XVFB_LIMIT: Duration = Duration::from_secs(120);
const XVFB_TRIES: u32 = 3;

/// `None` when there is no display and no Xvfb to start (and not on CI).
fn display() -> Option<Display> {
    if let Ok(name) = std::env::var("DISPLAY")
        && !name.is_empty()
    {
        return Some(Display { name, server: None });
    }
    let on_ci = std::env::var("CI").is_ok_and(|ci| ci == "true");
    let log = folder().join("xvfb.log");
    let mut failures = Vec::new();
    for _ in 0..XVFB_TRIES {
        match xvfb(&log) {
            Ok(display) => return Some(display),
            Err(XvfbError::Missing(e)) => {
                let message = format!("cannot start Xvfb ({e}); install the `xvfb` package");
                assert!(!on_ci, "{message}");
                eprintln!("skipped: {message}");
                return None;
            }
            Err(XvfbError::NotReady(why)) => {
                let output = std::fs::read_to_string(&log).unwrap_or_default();
                failures.push(format!("{why}; its output:\n{output}"));
            }
        }
    }
    panic!(
        "Xvfb did not start in {XVFB_TRIES} tries:\n{}",
        failures.join("\n")
    );
}

enum XvfbError {
    /// There is no `Xvfb` to run.
    Missing(std::io::Error),
    /// It ran but did not become ready; why.
    NotReady(String),
}

/// Starts an Xvfb that picks a free display number itself (`-displayfd`:
/// it writes the number to its stdout once clients can connect), with its
/// stderr in `log`.
fn xvfb(log: &Path) -> Result<Display, XvfbError> {
    let mut server = Command::new("Xvfb")
        .args(["-displayfd", "1", "-screen", "0", "1280x720x24"])
        .args(["-nolisten", "tcp"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .map_err(XvfbError::Missing)?;
    let stdout = server.stdout.take().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
        let _ = send.send(line);
    });
    let line = receive.recv_timeout(XVFB_LIMIT);
    let number = match line.as_deref().map(str::trim) {
        Ok(number) if !number.is_empty() => number.parse::<u32>().ok(),
        _ => None,
    };
    match number {
        Some(number) => Ok(Display {
            name: format!(":{number}"),
            server: Some((server, number)),
        }),
        None => {
            let _ = server.kill();
            let status = server.wait();
            Err(XvfbError::NotReady(match line {
                Ok(line) => format!("exited ({status:?}) after writing {line:?}"),
                Err(_) => format!("gave no display number in {XVFB_LIMIT:?}"),
            }))
        }
    }
}

/// Runs `example` for `frames` frames and returns its screenshot, or `None`
/// if there is no display to run it on.
fn capture(example: &str, sources: &[&str], frames: u32) -> Option<RgbImage> {
    captures(example, sources, frames, &[&[]]).map(|mut shots| shots.remove(0))
}

/// Runs one process of `example` per entry of `runs` (its command-line
/// arguments) at once, each for `frames` frames, and returns their
/// screenshots in order; `None` if there is no display to run them on.
fn captures(
    example: &str,
    sources: &[&str],
    frames: u32,
    runs: &[&[&str]],
) -> Option<Vec<RgbImage>> {
    captures_named(example, example, sources, frames, runs)
}

/// [`captures`], with the screenshots and logs named after `named`.
fn captures_named(
    example: &str,
    named: &str,
    sources: &[&str],
    frames: u32,
    runs: &[&[&str]],
) -> Option<Vec<RgbImage>> {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let binary = lab::example_binary(example, sources);
    let display = display()?;
    let folder = folder();
    let name = |i: usize| {
        if runs.len() == 1 {
            named.to_string()
        } else {
            format!("{named}-{}", i + 1)
        }
    };
    let start = Instant::now();
    let mut children: Vec<(Child, PathBuf, PathBuf)> = runs
        .iter()
        .enumerate()
        .map(|(i, args)| {
            let path = folder.join(format!("{}.png", name(i)));
            let log = folder.join(format!("{}.log", name(i)));
            let _ = std::fs::remove_file(&path);
            let child = Command::new(&binary)
                .args(*args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .env("DISPLAY", &display.name)
                .env_remove("WAYLAND_DISPLAY")
                .env("EULER_CAPTURE", &path)
                .env("EULER_CAPTURE_FRAMES", frames.to_string())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .expect("the example starts");
            (child, path, log)
        })
        .collect();
    let mut shots = Vec::new();
    for (child, path, log) in &mut children {
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{example} ran past {LIMIT:?}; its log: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            status.success(),
            "{example} exited with {status}; its log:\n{output}"
        );
        let image = image::open(&path)
            .unwrap_or_else(|e| panic!("{example} wrote no readable {}: {e}", path.display()))
            .to_rgb8();
        assert_eq!(
            image.dimensions(),
            (WIDTH, HEIGHT),
            "{example}'s screenshot size"
        );
        eprintln!(
            "{example}: {frames} frames in {:.1} s, {}",
            start.elapsed().as_secs_f32(),
            path.display()
        );
        shots.push(image);
    }
    Some(shots)
}

fn rgb(color: Color) -> [u8; 3] {
    let [r, g, b, _] = Srgba::from(color).to_u8_array();
    [r, g, b]
}

fn near(a: [u8; 3], b: [u8; 3], tolerance: u8) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= tolerance)
}

/// The pixels within `tolerance` of any of `colors` (and not of the
/// background, which dim colours come near), as (x, y).
fn pixels_of(image: &RgbImage, colors: &[Color], tolerance: u8) -> Vec<(u32, u32)> {
    let colors: Vec<[u8; 3]> = colors.iter().map(|&c| rgb(c)).collect();
    let background = rgb(BACKGROUND);
    image
        .enumerate_pixels()
        .filter(|(_, _, p)| !near(p.0, background, 12))
        .filter(|(_, _, p)| colors.iter().any(|&c| near(p.0, c, tolerance)))
        .map(|(x, y, _)| (x, y))
        .collect()
}

/// Not blank: a good share of the picture is not the clear colour, in many
/// different colours.
fn assert_not_blank(example: &str, image: &RgbImage) {
    assert_drawn(example, image, 0.01, 50);
}

/// At least `least` of the picture is not the clear colour, in at least
/// `colors` different colours.
fn assert_drawn(example: &str, image: &RgbImage, least: f32, colors: usize) {
    let background = rgb(BACKGROUND);
    let drawn = image
        .pixels()
        .filter(|p| !near(p.0, background, 12))
        .count();
    let share = drawn as f32 / (WIDTH * HEIGHT) as f32;
    assert!(
        share > least,
        "{example}: only {:.2}% of the picture differs from the background",
        share * 100.0
    );
    let mut distinct: Vec<[u8; 3]> = image.pixels().map(|p| p.0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(
        distinct.len() >= colors,
        "{example}: only {} distinct colours",
        distinct.len()
    );
}

/// World point (metres) to pixel, for a 2D camera at `camera` with
/// `scale` pixels per metre.
fn to_pixel(world: (f32, f32), camera: (f32, f32), scale: f32) -> (f32, f32) {
    (
        WIDTH as f32 / 2.0 + (world.0 - camera.0) * scale,
        HEIGHT as f32 / 2.0 - (world.1 - camera.1) * scale,
    )
}

/// Ten ragdolls dropped onto each other end in a heap on the ground: after
/// 21 s of game time every ragdoll's colour (awake or asleep) is found,
/// almost all of it in the band just above the ground line, and ragdolls
/// at rest are drawn asleep. The example's own report of the heap (its log,
/// once a second) says that no two bodies that touch overlap by more than a
/// tenth of the smaller radius, every limited angle is within 0.05 rad
/// (3°) of its limits (limits are soft: the heap's weight bends them a
/// little), and every body sleeps.
#[test]
fn ragdolls_end_in_a_heap_on_the_ground() {
    // As in `examples/ragdoll.rs`.
    const SCALE: f32 = 100.0;
    const GROUND: f32 = -3.0;
    let colors = [
        Color::srgb(0.95, 0.55, 0.35),
        Color::srgb(0.45, 0.8, 0.95),
        Color::srgb(0.55, 0.9, 0.45),
        Color::srgb(0.95, 0.8, 0.3),
    ];
    let Some(image) = capture(
        "ragdoll",
        &["examples/ragdoll.rs", "assets/models/ragdoll.model.ron"],
        1260,
    ) else {
        return;
    };
    assert_not_blank("ragdoll", &image);
    let log = std::fs::read_to_string(folder().join("ragdoll.log")).unwrap();
    let heap = log
        .lines()
        .filter_map(|line| line.split_once("HEAP ").map(|(_, heap)| heap))
        .next_back()
        .expect("the example reports its heap");
    let words: Vec<&str> = heap.split_whitespace().collect();
    let number = |key: &str| -> f32 {
        let at = words.iter().position(|&w| w == key).unwrap();
        words[at + 1].parse().unwrap()
    };
    let (overlap, excess, asleep) = (number("overlap"), number("excess"), number("asleep"));
    let bodies = number("of");
    assert!(bodies >= 130.0, "only {bodies} bodies: {heap}");
    assert!(
        overlap <= 0.1,
        "two bodies overlap by {overlap} radii: {heap}"
    );
    assert!(
        excess <= 0.05,
        "an angle is {excess} rad past its limits: {heap}"
    );
    assert_eq!(asleep, bodies, "not all asleep: {heap}");
    let (_, ground) = to_pixel((0.0, GROUND), (0.0, 0.0), SCALE);
    // The scene: outside the physics panel (top left) and the ragdolls'
    // window (top right).
    let in_panel = |x: u32, y: u32| (x < 380 && y < 580) || (x > 920 && y < 170);
    let scene = |x: u32, y: u32| !in_panel(x, y);
    let mut asleep_pixels = 0;
    for color in colors {
        let asleep = color.darker(0.35);
        let in_scene = |pixels: Vec<(u32, u32)>| -> Vec<(u32, u32)> {
            pixels.into_iter().filter(|&(x, y)| scene(x, y)).collect()
        };
        let pixels = in_scene(pixels_of(&image, &[color, asleep], 24));
        asleep_pixels += in_scene(pixels_of(&image, &[asleep], 24)).len();
        assert!(
            pixels.len() > 150,
            "a ragdoll in {:?} is missing: {} pixels",
            rgb(color),
            pixels.len()
        );
        // Lying or sitting: within a standing ragdoll's height (1.75 m) of
        // the ground, and not below it.
        let on_ground = pixels
            .iter()
            .filter(|&&(_, y)| {
                let y = y as f32;
                y <= ground + 4.0 && y >= ground - 1.8 * SCALE
            })
            .count();
        assert!(
            on_ground as f32 >= 0.95 * pixels.len() as f32,
            "the ragdoll in {:?} is not on the ground: {} of {} pixels in the band above it",
            rgb(color),
            on_ground,
            pixels.len()
        );
    }
    assert!(
        asleep_pixels > 150,
        "no ragdoll is drawn asleep after 10 s ({asleep_pixels} pixels)"
    );
}

/// The ropes hang from their anchors: each rope's colour is found below its
/// anchor and no further sideways from it than the rope is long.
#[test]
fn ropes_hang_from_their_anchors() {
    // As in `examples/spring_rope.rs`.
    const SCALE: f32 = 100.0;
    const CAMERA: (f32, f32) = (0.0, -0.9);
    const TOP: f32 = 2.2;
    const LINKS: usize = 20;
    const LINK: f32 = 0.12;
    const LENGTH: f32 = LINKS as f32 * LINK;
    const LINK_MASS: f32 = 0.2;
    const BOB_MASS: f32 = 1.0;
    let ropes = [
        (-1.4, 0.625, Color::srgb(0.95, 0.55, 0.35)),
        (0.1, 0.79, Color::srgb(0.95, 0.8, 0.3)),
        (1.6, 1.25, Color::srgb(0.45, 0.85, 0.45)),
        (3.1, 1.98, Color::srgb(0.35, 0.7, 0.95)),
        (4.6, 2.8, Color::srgb(0.7, 0.5, 0.95)),
    ]
    .map(|(x, hertz, color)| {
        let rope = Rope::new(RopeEnd::Fixed(Vec3::ZERO), RopeEnd::Free(Vec3::X))
            .with_mass_per_metre(LINK_MASS / LINK)
            .with_stretch(hertz, 0.005);
        (x, rope.link_coefficients(LENGTH, LINKS).unwrap().0, color)
    });
    // The scene: above the ropes' window (bottom right) and right of the
    // physics panel (top left).
    let scene = |x: u32, y: u32| y < 500 && x > 380;
    let Some(image) = capture("spring_rope", &["examples/spring_rope.rs"], 180) else {
        return;
    };
    assert_not_blank("spring_rope", &image);
    for (x, stiffness, color) in ropes {
        let pixels: Vec<_> = pixels_of(&image, &[color, color.darker(0.3)], 24)
            .into_iter()
            .filter(|&(x, y)| scene(x, y))
            .collect();
        assert!(
            pixels.len() > 150,
            "the rope at x = {x} is missing: {} pixels",
            pixels.len()
        );
        let (anchor_x, anchor_y) = to_pixel((x, TOP), CAMERA, SCALE);
        // Hanging at rest, spring i from the top carries the weight below
        // it and stretches by that over k; swinging may pull harder: allow
        // twice the static stretch.
        let stretch: f32 = (1..=LINKS)
            .map(|i| (BOB_MASS + (LINKS - i) as f32 * LINK_MASS) * 9.81 / stiffness)
            .sum();
        let reach = (LENGTH + 2.0 * stretch) * SCALE;
        let inside = pixels
            .iter()
            .filter(|&&(px, py)| {
                let (dx, dy) = (px as f32 - anchor_x, py as f32 - anchor_y);
                dy >= -6.0 && dx.hypot(dy) <= reach + 12.0
            })
            .count();
        assert!(
            inside as f32 >= 0.95 * pixels.len() as f32,
            "the rope at x = {x}: only {inside} of {} pixels hang within reach of its anchor",
            pixels.len()
        );
    }
}

/// The stress mode of `spring_rope`: 100 000 bodies in 1 000 ropes, each
/// drawn as one line strip, spread over the window in rows.
#[test]
fn a_hundred_thousand_bodies_in_a_window() {
    // As in `examples/spring_rope.rs`'s `stress` module.
    let color = Color::srgb(0.45, 0.75, 0.95);
    let Some(mut shots) = captures_named(
        "spring_rope",
        "spring_rope_stress",
        &["examples/spring_rope.rs"],
        120,
        &[&["--ropes", "1000", "--segments", "100"]],
    ) else {
        return;
    };
    let image = shots.remove(0);
    assert_not_blank("spring_rope (stress)", &image);
    let pixels = pixels_of(&image, &[color], 24);
    assert!(
        pixels.len() > 50_000,
        "the ropes cover {} pixels",
        pixels.len()
    );
    // Right of the physics panel (top left): ropes out to the right edge's
    // side, and in (at least) two rows, a band without ropes between them.
    let scene: Vec<_> = pixels.iter().filter(|&&(x, _)| x > 410).collect();
    let right = scene.iter().filter(|&&&(x, _)| x > 1000).count();
    assert!(right > 2_000, "no ropes at the right: {right} pixels");
    let mut rows_with_ropes = vec![false; HEIGHT as usize];
    for &&(_, y) in &scene {
        rows_with_ropes[y as usize] = true;
    }
    let first = rows_with_ropes.iter().position(|&r| r).unwrap();
    let last = rows_with_ropes.iter().rposition(|&r| r).unwrap();
    let widest_gap = rows_with_ropes[first..=last]
        .split(|&r| r)
        .map(<[bool]>::len)
        .max()
        .unwrap_or(0);
    assert!(
        widest_gap >= 20,
        "one band of ropes (rows {first}–{last}), not rows: widest gap {widest_gap} px"
    );
    // The ropes hang from their anchors: each row's topmost rope pixels lie
    // on its anchors' line. The layout as `stress::setup` computes it.
    let (ropes, n, rest, spacing) = (1000.0f32, 100.0f32, 0.1f32, 0.5f32);
    let stretch = n * (n + 1.0) * 9.81 / (2.0 * 1000.0);
    let row_height = 1.1 * (n * rest + 2.0 * stretch);
    let columns = ((16.0 / 9.0) * ropes * row_height / spacing).sqrt().ceil();
    let rows = (ropes / columns).ceil();
    let (width, height) = (columns * spacing, rows * row_height);
    let fit = (1180.0f32 / width).min(660.0 / height);
    let camera = (width / 2.0, -height / 2.0);
    for row in 0..rows as usize {
        let (_, anchors) = to_pixel((0.0, -(row as f32) * row_height), camera, fit);
        let anchors = anchors.round() as usize;
        assert!(
            !rows_with_ropes[anchors.saturating_sub(12)..anchors.saturating_sub(3)].contains(&true),
            "ropes above row {row}'s anchors (y = {anchors})"
        );
        assert!(
            rows_with_ropes[anchors - 2..=anchors + 6].contains(&true),
            "no rope at row {row}'s anchors (y = {anchors})"
        );
    }
}

/// The rocket flies 1 000 km in 10 s towing a rope of rods: with the
/// floating origin on, the origin follows it in cells of 512 m and the
/// rods keep their length to millimetres; with it off (the second run),
/// the rocket is 1 000 km from local zero and the rods are centimetres off.
/// Both draw the rocket at the centre of the window, the rope beside it.
#[test]
fn rocket_flies_a_thousand_kilometres() {
    let Some(images) = captures(
        "rocket",
        &["examples/rocket.rs"],
        660,
        &[&[], &["--no-floating-origin"]],
    ) else {
        return;
    };
    let flight = |run: usize| -> Vec<(String, f64)> {
        let log = std::fs::read_to_string(folder().join(format!("rocket-{run}.log"))).unwrap();
        let line = log
            .lines()
            .filter_map(|line| line.split_once("FLIGHT ").map(|(_, f)| f.to_string()))
            .next_back()
            .expect("the example reports its flight");
        let words: Vec<&str> = line.split_whitespace().collect();
        words
            .chunks(2)
            .map(|pair| (pair[0].to_string(), pair[1].parse().unwrap()))
            .collect()
    };
    let get = |words: &[(String, f64)], key: &str| {
        words
            .iter()
            .find(|(k, _)| k == key)
            .map(|&(_, v)| v)
            .unwrap()
    };
    let (on, off) = (flight(1), flight(2));
    eprintln!("floating origin on: {on:?}\noff: {off:?}");
    for words in [&on, &off] {
        assert!(get(words, "world") >= 1.0e6, "it flew 1 000 km: {words:?}");
    }
    assert!(get(&on, "local").abs() <= 512.0, "{on:?}");
    assert!(get(&on, "shifts") >= 600.0, "{on:?}");
    assert!(get(&on, "worst") <= 0.01, "rods within 1 cm: {on:?}");
    assert_eq!(get(&off, "shifts"), 0.0, "{off:?}");
    assert!(get(&off, "local") >= 1.0e6, "{off:?}");
    assert!(
        get(&off, "worst") > 5.0 * get(&on, "worst"),
        "precision lost without the floating origin: {off:?}"
    );
    // Outside the physics panel (top left) and the readout (top right).
    let scene = |&(x, y): &(u32, u32)| !((x < 380 && y < 580) || (x > 740 && y < 160));
    for (run, image) in images.iter().enumerate() {
        assert_not_blank("rocket", image);
        let rocket: Vec<(u32, u32)> = pixels_of(image, &[Color::srgb(0.85, 0.88, 0.95)], 20)
            .into_iter()
            .filter(scene)
            .collect();
        let pod = pixels_of(image, &[Color::srgb(0.35, 0.7, 0.95)], 20);
        assert!(
            rocket.len() > 100,
            "run {run}: the rocket: {} pixels",
            rocket.len()
        );
        assert!(pod.len() > 100, "run {run}: the pod: {} pixels", pod.len());
        let (cx, cy) = (WIDTH as f32 / 2.0, HEIGHT as f32 / 2.0);
        let near_centre = rocket
            .iter()
            .filter(|&&(x, y)| (x as f32 - cx).hypot(y as f32 - cy) < 60.0)
            .count();
        assert!(
            near_centre * 2 > rocket.len(),
            "run {run}: the camera follows the rocket"
        );
    }
}

/// The 3D cloth (a 64×64 mesh made soft, stiff springs) hangs from its
/// corners over the ball after 4 s, at one pass of implicit springs whose
/// conjugate gradients converged in every step (nothing reported): the
/// largest stretch of an edge stays within 10 %, every body is finite and above the ground,
/// and the picture shows a lit yellow cloth and the red ball, with the
/// cloth above the ball's lowest point on screen.
#[test]
fn cloth_hangs_over_the_ball() {
    let Some(image) = capture("cloth", &["examples/cloth.rs"], 240) else {
        return;
    };
    assert_not_blank("cloth", &image);
    let log = std::fs::read_to_string(folder().join("cloth.log")).unwrap();
    let report = Report::last(&log, "CLOTH");
    let line = &report.line;
    let number = |key: &str| report.number(key);
    assert_eq!(number("bodies"), 64.0 * 64.0, "{line}");
    assert_eq!(number("passes"), 1.0, "one implicit pass: {line}");
    assert!(
        !log.contains("implicit solve of its island stopped"),
        "conjugate gradients reached their cap"
    );
    assert_eq!(number("finite"), 1.0, "{line}");
    assert!(
        number("stretch") < 0.1,
        "a spring stretched past 10 %: {line}"
    );
    assert!(
        number("lowest") > -1.5,
        "the cloth is above the ground: {line}"
    );
    // Outside the physics panel (top left) and the readout (top right).
    let scene = |x: u32, y: u32| !((x < 380 && y < 580) || (x > 900 && y < 120));
    let (mut cloth, mut ball) = (Vec::new(), Vec::new());
    for (x, y, p) in image.enumerate_pixels() {
        let [r, g, b] = p.0.map(f32::from);
        if !scene(x, y) {
            continue;
        }
        if r > 90.0 && g > 0.65 * r && b < 0.55 * g {
            cloth.push((x, y));
        } else if r > 90.0 && g < 0.5 * r && b < 0.5 * r {
            ball.push((x, y));
        }
    }
    assert!(cloth.len() > 5000, "the cloth: {} pixels", cloth.len());
    assert!(ball.len() > 300, "the ball: {} pixels", ball.len());
    let top = |pixels: &[(u32, u32)]| pixels.iter().map(|p| p.1).min().unwrap();
    assert!(
        top(&cloth) < top(&ball),
        "the cloth's top edge is above the ball on screen"
    );
}

/// A red ball's pixel (`[r, g, b]`, 0 to 255).
fn red_ball([r, g, b]: [f32; 3]) -> bool {
    r > 120.0 && g < 0.5 * r && b < 0.5 * r
}

/// How many pixels of a 3D example's picture outside the physics panel
/// (top left) and the readout (top right) are of each kind (the first
/// kind a pixel matches).
fn count_in_scene<const N: usize>(
    image: &RgbImage,
    kinds: [&dyn Fn([f32; 3]) -> bool; N],
) -> [usize; N] {
    let scene = |x: u32, y: u32| !((x < 380 && y < 600) || (x > 1000 && y < 70));
    let mut counts = [0; N];
    for (x, y, p) in image.enumerate_pixels() {
        if !scene(x, y) {
            continue;
        }
        let rgb = p.0.map(f32::from);
        if let Some(k) = kinds.iter().position(|kind| kind(rgb)) {
            counts[k] += 1;
        }
    }
    counts
}

/// The last line of an example's log that reports under `key`
/// (`KEY word value word value ...`).
struct Report {
    line: String,
}

impl Report {
    fn last(log: &str, key: &str) -> Self {
        let line = log
            .lines()
            .filter_map(|line| {
                line.split_once(&format!("{key} "))
                    .map(|(_, c)| c.to_string())
            })
            .next_back()
            .unwrap_or_else(|| panic!("the example reports {key}"));
        Self { line }
    }

    /// The number after the word `key`.
    fn number(&self, key: &str) -> f32 {
        let words: Vec<&str> = self.line.split_whitespace().collect();
        let at = words
            .iter()
            .position(|&w| w == key)
            .unwrap_or_else(|| panic!("no {key} in {}", self.line));
        words[at + 1].parse().unwrap()
    }
}

/// The flag, loaded from `assets/flag.gltf` (672 vertices, 21 of them
/// repeated along its UV cut), flies from its moving pole after 4 s: 651
/// bodies (welded), the 21 painted red pinned, every body finite, the
/// flag out from the pole in the wind and not fallen; the picture shows it.
#[test]
fn the_flag_flies_from_its_pole() {
    let Some(image) = capture("flag", &["examples/flag.rs", "assets/flag.gltf"], 240) else {
        return;
    };
    assert_not_blank("flag", &image);
    let log = std::fs::read_to_string(folder().join("flag.log")).unwrap();
    let report = Report::last(&log, "FLAG");
    let line = &report.line;
    assert_eq!(report.number("vertices"), 672.0, "{line}");
    assert_eq!(report.number("bodies"), 651.0, "{line}");
    assert_eq!(report.number("pinned"), 21.0, "{line}");
    assert_eq!(report.number("finite"), 1.0, "{line}");
    assert!(report.number("reach") > 0.8, "the flag flies out: {line}");
    assert!(
        report.number("lowest") > 1.0,
        "the flag is up its pole: {line}"
    );
    // The flag's blue, tinted by its vertex colours and the light.
    let blue = image
        .pixels()
        .filter(|p| {
            let [r, g, b] = p.0.map(f32::from);
            b > 90.0 && b > 1.6 * r && b > 1.2 * g
        })
        .count();
    assert!(blue > 3000, "the flag: {blue} pixels");
}

/// The level (its floor, ramp, stairs and wall loaded from
/// `assets/level.gltf` and made an obstacle of its 28 triangles, a
/// height-field hill and a moving platform) after 5 s: its 60 balls are
/// all above the floor, some resting high (on the ramp, the stairs, the
/// hill, the platform or the net), every body finite; the picture shows
/// the red balls and the green hill.
#[test]
fn the_level_holds_its_balls() {
    let sources = ["examples/level.rs", "assets/level.gltf"];
    let Some(image) = capture("level", &sources, 300) else {
        return;
    };
    assert_not_blank("level", &image);
    let log = std::fs::read_to_string(folder().join("level.log")).unwrap();
    let mesh = Report::last(&log, "LEVEL_MESH");
    assert_eq!(mesh.number("triangles"), 28.0, "{}", mesh.line);
    let report = Report::last(&log, "LEVEL");
    let line = &report.line;
    assert_eq!(report.number("balls"), 60.0, "{line}");
    assert_eq!(report.number("obstacles"), 3.0, "{line}");
    assert_eq!(report.number("finite"), 1.0, "{line}");
    assert_eq!(
        report.number("fallen"),
        0.0,
        "no ball through the floor: {line}"
    );
    assert!(
        report.number("on_hill") >= 1.0,
        "a ball rests on the hill: {line}"
    );
    assert!(
        report.number("high") >= 20.0,
        "balls rest on the level's heights: {line}"
    );
    let green = |[r, g, b]: [f32; 3]| g > 100.0 && g > 1.3 * r && g > 1.3 * b;
    let [red, green] = count_in_scene(&image, [&red_ball, &green]);
    assert!(red > 2000, "the balls: {red} pixels");
    assert!(green > 20000, "the hill: {green} pixels");
}

/// The crane example after 5 s (300 frames of 1/60 s), avian's rigid
/// bodies and this crate's through the avian bridge: the crate hangs on
/// its rope about the rope's length below the swinging arm (the rope holds
/// it up), the boxes dropped on the net are held by it above the floor,
/// the balls rolled down avian's ramp and pushed a box along; every body
/// finite; the picture shows the red balls and the wooden boxes.
#[test]
fn the_crane_lifts_its_crate_and_the_net_holds_its_boxes() {
    let sources = [
        "examples/crane.rs",
        "bridges/avian3d/src/lib.rs",
        "bridges/avian/bridge.rs",
        "bridges/kit.rs",
        "bridges/shapes3d.rs",
    ];
    let Some(image) = capture("crane", &sources, 300) else {
        return;
    };
    assert_not_blank("crane", &image);
    let log = std::fs::read_to_string(folder().join("crane.log")).unwrap();
    let report = Report::last(&log, "CRANE");
    let line = &report.line;
    assert_eq!(report.number("finite"), 1.0, "{line}");
    // The rope (2 m, from 0.1 m below the arm's centre to the crate's top,
    // 0.3 m above its centre), a little stretched and swinging.
    let hang = report.number("hang");
    assert!(
        (2.3..2.8).contains(&hang),
        "the crate hangs {hang} m below: {line}"
    );
    assert!(
        report.number("lowest") > report.number("net") - 0.6,
        "the net holds its boxes: {line}"
    );
    assert!(report.number("moved") > 0.05, "a ball pushed a box: {line}");
    let wood = |[r, g, b]: [f32; 3]| r > 120.0 && g > 0.55 * r && g < 0.85 * r && b < 0.6 * g;
    let [red, wood] = count_in_scene(&image, [&red_ball, &wood]);
    assert!(red > 500, "the balls: {red} pixels");
    assert!(wood > 2000, "the boxes: {wood} pixels");
}

/// The wrecking-ball example after 5 s (300 frames of 1/60 s), rapier's
/// rigid bodies and this crate's through the rapier bridge: the 8 kg ball,
/// let go at the beam's height on its 3 m rope, has swung down and never
/// got farther from the beam than the rope's length and its stretch under
/// the swing's pull (the rope holds it: a free ball would fall away), and
/// has knocked a box
/// of the stack at least half a metre; the boxes dropped on the net are
/// held by it; every body finite; the picture shows the red ball and the
/// wooden boxes.
#[test]
fn the_wrecking_ball_swings_on_its_rope_and_the_net_holds_its_boxes() {
    let sources = [
        "examples/wrecking_ball.rs",
        "bridges/rapier3d/src/lib.rs",
        "bridges/kit.rs",
        "bridges/shapes3d.rs",
    ];
    let Some(image) = capture("wrecking_ball", &sources, 300) else {
        return;
    };
    assert_not_blank("wrecking_ball", &image);
    let log = std::fs::read_to_string(folder().join("wrecking_ball.log")).unwrap();
    let report = Report::last(&log, "WRECKING");
    let line = &report.line;
    assert_eq!(report.number("finite"), 1.0, "{line}");
    // From the beam to the ball's centre: the rope (3 m) and the radius
    // (0.35 m), the rope stretched as the ball swings through the bottom,
    // by at most the pull there (3·m·g for a pendulum let go level with
    // its pivot, 235 N) over the rope's stiffness (`axial_stiffness`:
    // μ·(4·L·f)² = 0.2·(4·3·8)² = 1 843 N for its 3 m, 0.38 m).
    let farthest = report.number("farthest");
    assert!(
        (3.3..3.8).contains(&farthest),
        "the ball got {farthest} m from the beam: {line}"
    );
    assert!(report.number("knocked") > 0.5, "the stack: {line}");
    assert!(
        report.number("lowest") > report.number("net") - 0.6,
        "the net holds its boxes: {line}"
    );
    let wood = |[r, g, b]: [f32; 3]| r > 120.0 && g > 0.55 * r && g < 0.85 * r && b < 0.6 * g;
    let [red, wood] = count_in_scene(&image, [&red_ball, &wood]);
    assert!(red > 500, "the ball: {red} pixels");
    assert!(wood > 2000, "the boxes: {wood} pixels");
}

/// The cape example after 5 s (300 frames of 1/60 s): the character, its
/// parts obstacles of Bevy's primitives, has walked its clip round the
/// circle at the clip's pace (a lap of 8 s of radius 1.6 m: 45° and
/// 1.257 m a second, within 2 % and 1 %, the clip sampled at each fixed
/// step's time, so that it turns by the same angle at each step); its cape
/// (15 × 22 vertices, the top row pinned to the torso) has slid over the
/// torso, legs and arms, many of its bodies touching them, without a body
/// ever passing into one (its centre inside) or sinking into one by half
/// its radius; every body finite, the cape hanging; the picture shows the
/// red cape.
#[test]
fn the_cape_slides_over_its_walker() {
    let Some(image) = capture("cape", &["examples/cape.rs"], 300) else {
        return;
    };
    assert_not_blank("cape", &image);
    let log = std::fs::read_to_string(folder().join("cape.log")).unwrap();
    let report = Report::last(&log, "CAPE");
    let line = &report.line;
    assert_eq!(report.number("bodies"), 330.0, "{line}");
    assert_eq!(report.number("pinned"), 15.0, "{line}");
    assert_eq!(report.number("finite"), 1.0, "{line}");
    let walked = report.number("t");
    let turned = report.number("turned");
    assert!(
        (turned - 45.0 * walked).abs() < 0.02 * 45.0 * walked,
        "the character turns with its clip: {line}"
    );
    // Each step, the same turn: the clip is sampled at the fixed clock
    // (64 Hz), not once a frame.
    let step = 45.0 / 64.0;
    for key in ["step_turn_least", "step_turn_most"] {
        assert!(
            (report.number(key) - step).abs() < 0.02 * step,
            "the character turns by the same angle each step: {line}"
        );
    }
    let travelled = report.number("travelled");
    let arc = std::f32::consts::TAU * 1.6 / 8.0 * walked;
    assert!(
        (travelled - arc).abs() < 0.01 * arc,
        "the character walks its circle: {line}"
    );
    assert_eq!(
        report.number("through"),
        0.0,
        "no cape body inside a limb: {line}"
    );
    assert!(
        report.number("nearest") > 0.5,
        "no cape body sinks half its radius into a limb: {line}"
    );
    assert!(
        report.number("touching") >= 20.0,
        "the cape lies on the character: {line}"
    );
    assert!(
        report.number("lowest") > 0.3,
        "the cape hangs from the shoulders: {line}"
    );
    // Outside the physics panel (top left) and the readout (top right).
    let scene = |x: u32, y: u32| !((x < 380 && y < 600) || (x > 840 && y < 70));
    let red = image
        .enumerate_pixels()
        .filter(|&(x, y, p)| {
            let [r, g, b] = p.0.map(f32::from);
            scene(x, y) && r > 120.0 && g < 0.4 * r && b < 0.4 * r
        })
        .count();
    assert!(red > 10000, "the cape: {red} pixels");
}

/// Four jellies (closed meshes with a pressure) dropped onto the ground
/// and onto each other rest after 6 s above the ground, each keeping its
/// volume within 15 %, every body finite; the picture shows them.
#[test]
fn jellies_keep_their_volumes() {
    let Some(image) = capture("jelly", &["examples/jelly.rs"], 360) else {
        return;
    };
    assert_not_blank("jelly", &image);
    let log = std::fs::read_to_string(folder().join("jelly.log")).unwrap();
    let report = Report::last(&log, "JELLY");
    let line = &report.line;
    assert_eq!(report.number("jellies"), 4.0, "{line}");
    assert_eq!(report.number("finite"), 1.0, "{line}");
    assert!(report.number("lowest") > 0.0, "above the ground: {line}");
    assert!(report.number("least") > 0.85, "{line}");
    assert!(report.number("most") < 1.15, "{line}");
    // Red, green, yellow and blue jellies on screen.
    let count =
        |keep: fn([f32; 3]) -> bool| image.pixels().filter(|p| keep(p.0.map(f32::from))).count();
    let red = count(|[r, g, b]| r > 120.0 && g < 0.5 * r && b < 0.5 * r);
    let green = count(|[r, g, b]| g > 100.0 && r < 0.6 * g && b < 0.7 * g);
    let blue = count(|[r, g, b]| b > 120.0 && r < 0.6 * b && g < 0.8 * b);
    assert!(
        red > 500 && green > 500 && blue > 500,
        "{red} {green} {blue}"
    );
}

/// Beads stay on their rings: every bead pixel (awake or asleep colour) is
/// within a bead's radius of one of the three rings.
#[test]
fn beads_stay_on_their_rings() {
    // As in `examples/custom_constraint.rs`.
    const SCALE: f32 = 110.0;
    const RADIUS: f32 = 1.5;
    const BEAD: f32 = 0.12;
    let centres = [-3.5, 0.0, 3.5];
    let Some(image) = capture("custom_constraint", &["examples/custom_constraint.rs"], 240) else {
        return;
    };
    assert_not_blank("custom_constraint", &image);
    let beads = pixels_of(
        &image,
        &[Color::srgb(0.95, 0.7, 0.3), Color::srgb(0.4, 0.5, 0.9)],
        24,
    );
    assert!(beads.len() > 100, "beads: {} pixels", beads.len());
    let off_ring = beads
        .iter()
        .filter(|&&(px, py)| {
            centres.iter().all(|&cx| {
                let (x, y) = to_pixel((cx, 0.0), (0.0, 0.0), SCALE);
                let d = (px as f32 - x).hypot(py as f32 - y);
                (d - RADIUS * SCALE).abs() > BEAD * SCALE + 4.0
            })
        })
        .count();
    assert!(
        off_ring * 100 <= beads.len(),
        "{off_ring} of {} bead pixels are off the rings",
        beads.len()
    );
}

/// The integrator lab, playing its trace event by event (`--trace`), draws
/// its panel and plots all four methods' drift: each method's colour is on
/// screen, and the panel (egui's grey) fills the left side. The code panel
/// fills the right side, with the line of the current event highlighted,
/// and the event's arrow is on the stage between the panels.
#[test]
fn lab_plots_every_method() {
    // As `METHOD_COLORS` in `examples/integrator_lab/ui.rs`.
    let methods = [
        Color::srgb_u8(235, 95, 85),
        Color::srgb_u8(240, 200, 70),
        Color::srgb_u8(100, 205, 125),
        Color::srgb_u8(120, 160, 245),
    ];
    // As `HIGHLIGHT` in `examples/integrator_lab/code.rs` and `EVENT_COLOR`
    // in `examples/integrator_lab/stage.rs`.
    let highlight = Color::srgb_u8(110, 80, 20);
    let event = Color::srgb(1.0, 0.3, 0.85);
    let sources = lab::lab_sources();
    let sources: Vec<&str> = sources.iter().map(String::as_str).collect();
    // 200 frames of 1/60 s: 3.3 s, the 8th event of 0.45 s each (the move
    // of the second semi-implicit Euler step).
    let Some(image) =
        captures("integrator_lab", &sources, 200, &[&["--trace"]]).map(|mut shots| shots.remove(0))
    else {
        return;
    };
    assert_not_blank("integrator_lab", &image);
    for color in methods {
        let pixels = pixels_of(&image, &[color], 16);
        assert!(
            pixels.len() > 40,
            "the method drawn in {:?} is missing: {} pixels",
            rgb(color),
            pixels.len()
        );
    }
    // The panels: the left and the right quarters are mostly not the
    // scene's background.
    let background = rgb(BACKGROUND);
    let differing = |xs: std::ops::Range<u32>| {
        (0..HEIGHT)
            .flat_map(|y| xs.clone().map(move |x| (x, y)))
            .filter(|&(x, y)| !near(image.get_pixel(x, y).0, background, 6))
            .count()
    };
    let quarter = (WIDTH / 4 * HEIGHT) as usize;
    let left = differing(0..WIDTH / 4);
    assert!(
        left * 2 > quarter,
        "no panel on the left: {left} pixels differ from the background"
    );
    let right = differing(WIDTH * 3 / 4..WIDTH);
    assert!(
        right * 2 > quarter,
        "no code panel on the right: {right} pixels differ from the background"
    );
    // A highlighted line of code, right of the middle: at least a line's
    // height over a few dozen characters.
    let lit = pixels_of(&image, &[highlight], 8)
        .into_iter()
        .filter(|&(x, _)| x > WIDTH * 2 / 3)
        .count();
    assert!(lit > 1500, "no highlighted line of code: {lit} pixels");
    // The event's arrow on the stage.
    let arrow = pixels_of(&image, &[event], 40)
        .into_iter()
        .filter(|&(x, _)| (WIDTH / 3..WIDTH * 2 / 3).contains(&x))
        .count();
    assert!(arrow > 10, "no event arrow on the stage: {arrow} pixels");
}

/// Two peers of the rollback example, each in its own window, play the same
/// session over UDP: in each one's picture both players' ragdolls (torso
/// colour) are found standing or lying on the ground line, none below it.
#[test]
fn rollback_peers_both_draw_two_ragdolls_on_the_ground() {
    // As in `examples/rollback.rs`.
    const SCALE: f32 = 120.0;
    const CAMERA: (f32, f32) = (0.0, 1.2);
    let torso = Color::srgb(0.95, 0.5, 0.35);
    let base = 30_000 + (std::process::id() % 20_000) as u16;
    let (a, b) = (base.to_string(), (base + 1).to_string());
    let (to_a, to_b) = (format!("127.0.0.1:{a}"), format!("127.0.0.1:{b}"));
    let Some(shots) = captures(
        "rollback",
        &["examples/rollback.rs", "src/rollback.rs"],
        240,
        &[
            &["--local-port", &a, "--remote", &to_b],
            &["--local-port", &b, "--remote", &to_a],
        ],
    ) else {
        return;
    };
    let (_, ground) = to_pixel((0.0, 0.0), CAMERA, SCALE);
    for (peer, image) in shots.iter().enumerate() {
        // Thin lines only.
        assert_drawn("rollback", image, 0.003, 5);
        let pixels = pixels_of(image, &[torso], 24);
        // Two ragdolls, one each side of the middle.
        let left = pixels.iter().filter(|&&(x, _)| x < WIDTH / 2).count();
        let right = pixels.len() - left;
        assert!(
            left > 30 && right > 30,
            "peer {}: torso pixels left {left}, right {right}",
            peer + 1
        );
        // Between the ground and a standing torso's height (2 m).
        let placed = pixels
            .iter()
            .filter(|&&(_, y)| {
                let y = y as f32;
                y <= ground + 4.0 && y >= ground - 2.0 * SCALE
            })
            .count();
        assert_eq!(
            placed,
            pixels.len(),
            "peer {}: torso pixels off the ground band",
            peer + 1
        );
    }
}
