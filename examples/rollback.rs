//! Rollback netcode over UDP: two players, each pushing a ragdoll, one
//! process each, in a GGRS peer-to-peer session on loopback.
//!
//! ```text
//! cargo run --release --example rollback -- --local-port 7000 --remote 127.0.0.1:7001
//! cargo run --release --example rollback -- --local-port 7001 --remote 127.0.0.1:7000
//! ```
//!
//! In a window (the default), each player pushes their own ragdoll with the
//! Left and Right arrow keys (player 1 is the lower port, on the left); the
//! other ragdoll moves as the other process says, rolled back and replayed
//! when its inputs arrive late. The title shows the frame and how many
//! frames were re-simulated so far.
//!
//! With `--headless`, each process instead runs scripted inputs (its player pushes its ragdoll left and right on a timetable) for
//! `--frames` confirmed frames, sending through a socket that holds every
//! packet back by `--latency` ms plus up to `--jitter` ms, so that inputs
//! arrive late and the session rolls back and re-simulates. It then prints
//!
//! ```text
//! frames: <confirmed frames>
//! checksum: <physics checksum at frame --frames, 16 hex digits>
//! rollbacks: <frames re-simulated>
//! ```
//!
//! and exits. The script follows the frame being simulated, so every run
//! of the pair, whatever its latency, jitter or load, simulates the same
//! inputs on the same frames: both processes, and every run, print the
//! same checksum when the simulation is deterministic. `tests/rollback_p2p.rs`
//! runs pairs and checks it.
//! Bad arguments print the usage and exit with code 2; a peer that does not
//! answer within 30 s exits with code 1.

mod support;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use bevy_euler_physics::prelude::*;
use bevy_euler_physics::rollback::EulerPhysicsRollbackPlugin;
use bevy_ggrs::ggrs::{Message, NonBlockingSocket, UdpNonBlockingSocket};
use bevy_ggrs::prelude::*;
use bevy_ggrs::{ConfirmedFrameCount, LocalInputs, LocalPlayers, RollbackFrameCount};

type Config = GgrsConfig<u8>;

const LEFT: u8 = 1;
const RIGHT: u8 = 2;

const USAGE: &str = "usage: rollback --local-port PORT --remote IP:PORT [--headless] \
                     [--frames N] [--latency MS] [--jitter MS]";

struct Args {
    headless: bool,
    local_port: u16,
    remote: SocketAddr,
    frames: i32,
    latency: u64,
    jitter: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut local_port = None;
    let mut remote = None;
    let (mut frames, mut latency, mut jitter) = (600, 40, 30);
    let mut headless = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--headless" => headless = true,
            "--local-port" => {
                local_port = Some(value()?.parse().map_err(|e| format!("--local-port: {e}"))?)
            }
            "--remote" => remote = Some(value()?.parse().map_err(|e| format!("--remote: {e}"))?),
            "--frames" => frames = value()?.parse().map_err(|e| format!("--frames: {e}"))?,
            "--latency" => latency = value()?.parse().map_err(|e| format!("--latency: {e}"))?,
            "--jitter" => jitter = value()?.parse().map_err(|e| format!("--jitter: {e}"))?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if frames < 1 {
        return Err("--frames must be at least 1".into());
    }
    Ok(Args {
        headless,
        local_port: local_port.ok_or("--local-port is required")?,
        remote: remote.ok_or("--remote is required")?,
        frames,
        latency,
        jitter,
    })
}

/// A UDP socket that holds each outgoing packet back by a latency plus a
/// pseudo-random jitter, as a slow network would.
struct LaggySocket {
    inner: UdpNonBlockingSocket,
    queue: VecDeque<(Instant, Message, SocketAddr)>,
    latency: Duration,
    jitter_ms: u64,
    seed: u64,
}

impl LaggySocket {
    fn flush(&mut self) {
        let now = Instant::now();
        while let Some((due, _, _)) = self.queue.front() {
            if *due > now {
                break;
            }
            let (_, message, addr) = self.queue.pop_front().unwrap();
            self.inner.send_to(&message, &addr);
        }
    }
}

impl NonBlockingSocket<SocketAddr> for LaggySocket {
    fn send_to(&mut self, msg: &Message, addr: &SocketAddr) {
        // xorshift64: a jitter that differs per packet.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let jitter = Duration::from_millis(self.seed % (self.jitter_ms + 1));
        let due = Instant::now() + self.latency + jitter;
        // Keep the queue in order of departure (no reordering).
        let due = self.queue.back().map_or(due, |(last, ..)| due.max(*last));
        self.queue.push_back((due, msg.clone(), *addr));
        self.flush();
    }

    fn receive_all_messages(&mut self) -> Vec<(SocketAddr, Message)> {
        self.flush();
        self.inner.receive_all_messages()
    }
}

/// Which ragdoll a body belongs to (the player handle), for the pushes.
#[derive(Component, Clone, Copy)]
struct Torso(usize);

/// The run's bookkeeping (not rolled back).
#[derive(Resource, Default)]
struct Run {
    frames: i32,
    checksum_at_end: Option<u64>,
    highest_frame: i32,
    resimulated: u64,
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(error) => {
            eprintln!("{error}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let local = usize::from(args.local_port > args.remote.port());
    let remote = 1 - local;
    let socket = match UdpNonBlockingSocket::bind_to_port(args.local_port) {
        Ok(socket) => socket,
        Err(error) => {
            eprintln!("cannot bind port {}: {error}", args.local_port);
            std::process::exit(1);
        }
    };
    let socket = LaggySocket {
        inner: socket,
        queue: VecDeque::new(),
        latency: Duration::from_millis(args.latency),
        jitter_ms: args.jitter,
        seed: 0x9e37_79b9_7f4a_7c15 ^ u64::from(args.local_port),
    };
    let mut builder = SessionBuilder::<Config>::new()
        .with_num_players(2)
        .expect("two players")
        .with_input_delay(0)
        .with_max_prediction_window(12);
    builder = builder
        .add_player(PlayerType::Local, local)
        .expect("local player")
        .add_player(PlayerType::Remote(args.remote), remote)
        .expect("remote player");
    let session = builder
        .start_p2p_session(socket)
        .expect("the session starts");

    let mut app = App::new();
    if args.headless {
        app.add_plugins(MinimalPlugins)
            .add_systems(ReadInputs, read_inputs);
    } else {
        app.add_plugins(DefaultPlugins.set(WindowPlugin {
            primary_window: Some(Window {
                title: "bevy_euler_physics: rollback".into(),
                resolution: (1280, 720).into(),
                ..default()
            }),
            ..default()
        }))
        .add_plugins(support::CapturePlugin)
        .insert_resource(ClearColor(Color::srgb(0.08, 0.09, 0.12)))
        .add_systems(ReadInputs, read_keys)
        .add_systems(Startup, camera)
        .add_systems(Update, (draw, title));
    }
    app.add_plugins(GgrsPlugin::<Config>::default())
        .add_plugins((EulerPhysicsPlugin, EulerPhysicsRollbackPlugin))
        .insert_resource(Time::<Fixed>::from_hz(60.0))
        .insert_resource(Session::P2P(session))
        .insert_resource(Run {
            frames: args.frames,
            ..default()
        })
        .rollback_component_with_copy::<ConstantForce>()
        .add_systems(Startup, scene)
        .add_systems(GgrsSchedule, push.in_set(PhysicsSystems::Prepare))
        .add_systems(GgrsSchedule, record.in_set(PhysicsSystems::Finish));

    if !args.headless {
        app.run();
        return;
    }
    let started = Instant::now();
    loop {
        app.update();
        let confirmed = app.world().resource::<ConfirmedFrameCount>().0;
        let run = app.world().resource::<Run>();
        if confirmed >= args.frames
            && let Some(checksum) = run.checksum_at_end
        {
            println!("frames: {confirmed}");
            println!("checksum: {checksum:016x}");
            println!("rollbacks: {}", run.resimulated);
            // Give the peer time to confirm its last frames with our inputs.
            let linger = Instant::now();
            while linger.elapsed() < Duration::from_millis(1500) {
                app.update();
                std::thread::sleep(Duration::from_millis(4));
            }
            return;
        }
        if started.elapsed() > Duration::from_secs(30) {
            eprintln!(
                "no peer at {} after 30 s (confirmed frame {confirmed})",
                args.remote
            );
            std::process::exit(1);
        }
        std::thread::sleep(Duration::from_millis(4));
    }
}

/// Player `handle`'s input on frame `n`: push right, rest, push left, rest.
fn script(handle: usize, n: u32) -> u8 {
    let phase = (n + 37 * handle as u32) % 240;
    match phase {
        0..60 => RIGHT,
        120..150 => LEFT,
        _ => 0,
    }
}

/// The scripted inputs for the frame the session is about to simulate.
///
/// Keyed to that frame (`RollbackFrameCount`: the frames advanced so far,
/// which the input read now moves on from), not to how often this system
/// ran: a session that waits for its peer (`PredictionThreshold`) reads
/// inputs again for the same frame, so a count of calls would hand each
/// frame an input that depends on the run's timing, and runs of the pair
/// would end on different checksums.
fn read_inputs(mut commands: Commands, players: Res<LocalPlayers>, frame: Res<RollbackFrameCount>) {
    let frame = u32::try_from(frame.0).unwrap_or(0);
    let mut inputs = HashMap::new();
    for &handle in &players.0 {
        inputs.insert(handle, script(handle, frame));
    }
    commands.insert_resource(LocalInputs::<Config>(inputs));
}

/// The local player's arrow keys.
fn read_keys(mut commands: Commands, players: Res<LocalPlayers>, keys: Res<ButtonInput<KeyCode>>) {
    let mut input = 0;
    if keys.pressed(KeyCode::ArrowLeft) {
        input |= LEFT;
    }
    if keys.pressed(KeyCode::ArrowRight) {
        input |= RIGHT;
    }
    let inputs = players.0.iter().map(|&handle| (handle, input)).collect();
    commands.insert_resource(LocalInputs::<Config>(inputs));
}

fn camera(mut commands: Commands) {
    commands.spawn(support::camera(120.0, Vec2::new(0.0, 1.2)));
}

/// The ground, the rods and the bodies, at their interpolated positions.
fn draw(
    bodies: Query<(&Transform, &Radius, Has<Torso>)>,
    rods: Query<&DistanceConstraint>,
    transforms: Query<&Transform>,
    mut gizmos: Gizmos,
) {
    gizmos.line_2d(
        Vec2::new(-5.0, 0.0),
        Vec2::new(5.0, 0.0),
        Color::srgb(0.5, 0.5, 0.55),
    );
    for rod in &rods {
        if let (Ok(a), Ok(b)) = (transforms.get(rod.a), transforms.get(rod.b)) {
            gizmos.line_2d(
                a.translation.truncate(),
                b.translation.truncate(),
                Color::srgb(0.9, 0.75, 0.4),
            );
        }
    }
    for (transform, radius, torso) in &bodies {
        let color = if torso {
            Color::srgb(0.95, 0.5, 0.35)
        } else {
            Color::srgb(0.7, 0.8, 0.95)
        };
        gizmos.circle_2d(transform.translation.truncate(), radius.0, color);
    }
}

/// The frame and the re-simulated frames in the title.
fn title(run: Res<Run>, frame: Res<RollbackFrameCount>, mut windows: Query<&mut Window>) {
    for mut window in &mut windows {
        let title = format!(
            "bevy_euler_physics: rollback (frame {}, {} frames re-simulated; arrows push your ragdoll)",
            frame.0, run.resimulated
        );
        if window.title != title {
            window.title = title;
        }
    }
}

/// Each player's input pushes its ragdoll's torso.
fn push(inputs: Res<PlayerInputs<Config>>, mut torsos: Query<(&Torso, &mut ConstantForce)>) {
    for (torso, mut force) in &mut torsos {
        let input = inputs[torso.0].0;
        let mut push = Vec3::ZERO;
        if input & RIGHT != 0 {
            push.x += 40.0;
        }
        if input & LEFT != 0 {
            push.x -= 40.0;
        }
        if force.0 != push {
            force.0 = push;
        }
    }
}

/// Counts re-simulated frames and keeps the checksum of the last frame.
fn record(world: &mut World) {
    let frame = world.resource::<RollbackFrameCount>().0;
    let end = world.resource::<Run>().frames;
    let checksum = (frame == end).then(|| physics_checksum(world));
    let mut run = world.resource_mut::<Run>();
    if frame <= run.highest_frame {
        run.resimulated += 1;
    }
    run.highest_frame = run.highest_frame.max(frame);
    if let Some(checksum) = checksum {
        run.checksum_at_end = Some(checksum);
    }
}

/// The ground and two ragdolls of rods, one per player.
fn scene(mut commands: Commands) {
    commands.spawn((GroundPlane::horizontal(0.0).with_restitution(0.1), Rollback));
    for (player, x) in [(0, -1.5f32), (1, 1.5)] {
        let points = [
            Vec3::new(x, 1.6, 0.0),       // head
            Vec3::new(x, 1.3, 0.0),       // chest
            Vec3::new(x, 0.9, 0.0),       // hips
            Vec3::new(x - 0.2, 0.1, 0.0), // left foot
            Vec3::new(x + 0.2, 0.1, 0.0), // right foot
            Vec3::new(x - 0.4, 1.2, 0.0), // left hand
            Vec3::new(x + 0.4, 1.2, 0.0), // right hand
        ];
        let parts: Vec<Entity> = points
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let mut e = commands.spawn((
                    Body::new(if i == 1 { 3.0 } else { 1.0 }).with_position(p),
                    Radius(0.08),
                    Damping(0.2),
                    Rollback,
                ));
                if i == 1 {
                    e.insert((Torso(player), ConstantForce(Vec3::ZERO)));
                }
                e.id()
            })
            .collect();
        for (a, b) in [
            (0, 1),
            (1, 2),
            (2, 3),
            (2, 4),
            (1, 5),
            (1, 6),
            (3, 4),
            (5, 2),
            (6, 2),
            (0, 5),
            (0, 6),
        ] {
            commands.spawn((
                DistanceConstraint::new(parts[a], parts[b], points[a].distance(points[b])),
                Rollback,
            ));
        }
    }
}
