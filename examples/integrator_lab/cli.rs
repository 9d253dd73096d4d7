//! The command line: the window's few options, and the headless runs that
//! print readouts (`--headless`), the four side by side (`--compare`), a
//! trace of every step (`--trace`) and an earlier step of the recorded run
//! (`--back`).

use bevy_euler_physics::integrators::{Integrator, State};

use crate::code::event_lines;
use crate::state::{Exact, Race, START, Settings, cli_name};
use crate::timeline::{MAX_FRAMES, Timeline};
use crate::trace::{Event, trace_step};

pub const USAGE: &str = "\
usage: integrator_lab [--method METHOD] [--trace]      open the window
       integrator_lab --headless [--method METHOD] [--dt D] [--stiffness K]
                      [--drag C] [--gravity G] --steps N [--back B] [--trace]
       integrator_lab --headless --compare [--dt D] [--stiffness K]
                      [--drag C] [--gravity G] --steps N [--back B]

Headless: run N steps from position (3, 0), velocity (0, 4) and print
time, energy, drift (%), error and speed, one per line. With --compare,
run all four methods side by side and print one line per method:
METHOD time=T energy=E drift=D error=X speed=S. A run that blows up stops.

  --method METHOD  euler (explicit-euler), semi-implicit, verlet or rk2
                   (default semi-implicit)
  --dt D           step in seconds, > 0 (default 0.1)
  --stiffness K    spring stiffness, >= 0 (default 4); 0 is a projectile
                   under gravity alone (drag 0)
  --drag C         linear drag, >= 0 and below the critical drag 2*sqrt(K)
                   (default 0)
  --gravity G      gravity (0, -G) (default 0)
  --steps N        number of steps (required)
  --back B         then step back B steps over the recorded run (B <= N):
                   reads exactly as --steps N-B
  --trace          before the readouts, one line per event of every step:
                   trace step=S event=force|accelerate|move|energy line=L
                   and its values (the window: play the trace event by
                   event)
  --compare        all four methods side by side (not with --method or
                   --trace)
  --help           show this message";

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    Window {
        method: Option<Integrator>,
        trace: bool,
    },
    Headless(Run),
    Help,
}

/// A headless run.
#[derive(Debug)]
pub struct Run {
    pub settings: Settings,
    pub steps: u64,
    pub back: u64,
    pub trace: bool,
    pub compare: bool,
}

fn parse_number(flag: &str, text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        _ => Err(format!("{flag} needs a finite number, got {text:?}")),
    }
}

fn parse_count(flag: &str, text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("{flag} needs a whole number, got {text:?}"))
}

/// The window's options: `--method M` and `--trace`.
fn parse_window(args: &[String]) -> Result<Command, String> {
    let mut method = None;
    let mut trace = false;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--trace" if !trace => trace = true,
            "--method" if method.is_none() => {
                let value = rest.next().ok_or("--method needs a value")?;
                method = Some(value.parse().map_err(|e| format!("--method: {e}"))?);
            }
            _ => {
                return Err(format!(
                    "{flag:?}: the window takes only --method and --trace; \
                     the other options are for --headless runs"
                ));
            }
        }
    }
    Ok(Command::Window { method, trace })
}

pub fn parse_args(args: &[String]) -> Result<Command, String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Command::Help);
    }
    if !args.iter().any(|a| a == "--headless") {
        return parse_window(args);
    }
    let mut run = Run {
        settings: Settings::default(),
        steps: 0,
        back: 0,
        trace: false,
        compare: false,
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let flag = flag.as_str();
        if seen.contains(&flag) {
            return Err(format!("{flag} given twice"));
        }
        seen.push(flag);
        match flag {
            "--headless" => continue,
            "--compare" => {
                run.compare = true;
                continue;
            }
            "--trace" => {
                run.trace = true;
                continue;
            }
            "--method" | "--dt" | "--stiffness" | "--drag" | "--gravity" | "--steps" | "--back" => {
            }
            _ => return Err(format!("unknown argument {flag:?}")),
        }
        let Some(value) = rest.next() else {
            return Err(format!("{flag} needs a value"));
        };
        let settings = &mut run.settings;
        match flag {
            "--method" => {
                settings.method = value.parse().map_err(|e| format!("--method: {e}"))?;
            }
            "--dt" => {
                settings.dt = parse_number(flag, value)?;
                if settings.dt <= 0.0 {
                    return Err(format!("--dt must be positive, got {value}"));
                }
            }
            "--stiffness" => {
                settings.stiffness = parse_number(flag, value)?;
                if settings.stiffness < 0.0 {
                    return Err(format!("--stiffness must not be negative, got {value}"));
                }
            }
            "--drag" => {
                settings.drag = parse_number(flag, value)?;
                if settings.drag < 0.0 {
                    return Err(format!("--drag must not be negative, got {value}"));
                }
            }
            "--gravity" => settings.gravity = parse_number(flag, value)?,
            "--steps" => run.steps = parse_count(flag, value)?,
            _ => run.back = parse_count(flag, value)?,
        }
    }
    if !seen.contains(&"--steps") {
        return Err("--steps is required".into());
    }
    if run.back > run.steps {
        return Err(format!(
            "--back {} goes before the start: the run has {} steps",
            run.back, run.steps
        ));
    }
    if run.back >= MAX_FRAMES as u64 {
        return Err(format!(
            "--back {}: the run keeps only its last {} steps",
            run.back,
            MAX_FRAMES - 1
        ));
    }
    if run.compare && seen.contains(&"--method") {
        return Err("--compare runs all four methods: drop --method".into());
    }
    if run.compare && run.trace {
        return Err("--trace follows one method: drop --compare".into());
    }
    // The same check the lab makes: e.g. drag too heavy for the stiffness.
    Exact::new(run.settings.system(), START, 0.0)?;
    Ok(Command::Headless(run))
}

/// `x,y` at full precision (each number reads back to the same bits).
fn pair(v: bevy::math::DVec2) -> String {
    format!("{},{}", v.x, v.y)
}

fn state_text(state: State) -> String {
    format!("x={} v={}", pair(state.position), pair(state.velocity))
}

/// One `--trace` line per event of the step `race`'s shown run takes next.
fn print_trace(race: &Race, step: u64) -> Result<(), String> {
    let trace = trace_step(race.shown());
    if !trace.matches {
        return Err(format!(
            "the trace of step {step} does not end where the library's step did"
        ));
    }
    for (i, event) in trace.events.iter().enumerate() {
        let lines: Vec<String> = event_lines(trace.method, i)
            .iter()
            .map(usize::to_string)
            .collect();
        let line = if lines.is_empty() {
            "-".to_owned()
        } else {
            lines.join(",")
        };
        let values = match *event {
            Event::Force {
                position,
                velocity,
                accel,
            } => format!(
                "{} a={}",
                state_text(State::new(position, velocity)),
                pair(accel)
            ),
            Event::Accelerate {
                from,
                to,
                accel,
                tau,
            } => format!(
                "from={} to={} a={} tau={tau}",
                pair(from),
                pair(to),
                pair(accel)
            ),
            Event::Move {
                from,
                to,
                velocity,
                tau,
            } => format!(
                "from={} to={} v={} tau={tau}",
                pair(from),
                pair(to),
                pair(velocity)
            ),
            Event::Energy {
                state,
                exact,
                energy,
                exact_energy,
                drift_percent,
                error,
            } => format!(
                "{} energy={energy} exact_energy={exact_energy} drift={drift_percent} \
                 error={error} exact_x={}",
                state_text(state),
                pair(exact.position)
            ),
        };
        println!(
            "trace step={step} event={} line={line} {values}",
            event.kind().name()
        );
    }
    Ok(())
}

/// Runs `run.steps` steps of the four methods side by side, recording
/// them, then goes `run.back` steps back over the record.
pub fn run_headless(run: &Run) -> Result<Race, String> {
    let mut race = Race::new(run.settings)?;
    let mut timeline = (run.back > 0).then(|| Timeline::new(&race));
    for step in 1..=run.steps {
        if run.trace && !race.shown().blown_up() {
            print_trace(&race, step)?;
        }
        race.step();
        if let Some(timeline) = &mut timeline {
            timeline.push(&race);
        }
    }
    if let Some(mut timeline) = timeline {
        timeline.seek(timeline.end() - run.back as usize);
        race = timeline.race_at(timeline.cursor(), race.shown);
    }
    Ok(race)
}

/// Prints what `run` asks for.
pub fn print_run(run: &Run) -> Result<(), String> {
    let race = run_headless(run)?;
    if run.compare {
        for (method, lab) in Integrator::ALL.into_iter().zip(&race.labs) {
            let r = lab.readouts();
            println!(
                "{} time={} energy={} drift={} error={} speed={}",
                cli_name(method),
                r.time,
                r.energy,
                r.drift_percent,
                r.error,
                r.speed
            );
        }
    } else {
        let r = race.shown().readouts();
        println!("time: {}", r.time);
        println!("energy: {}", r.energy);
        println!("drift: {}", r.drift_percent);
        println!("error: {}", r.error);
        println!("speed: {}", r.speed);
    }
    Ok(())
}
