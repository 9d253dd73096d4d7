//! A debugging panel and gizmos drawn with egui: [`EulerPhysicsDebugPlugin`]
//! (feature `debug-ui`).
//!
//! The plugin shows a window titled "Physics" at the top left of the
//! primary window (F1 hides and shows it) with
//!
//! - **readouts**: the fixed rate, the default substep count, how many fixed
//!   steps ran this frame and how long they took, bodies awake / asleep /
//!   fixed, the number of islands and the island with the smallest
//!   [`Island::margin`](crate::Island::margin) (red when unstable);
//! - **energy**: kinetic, spring and gravitational energy of the scene (see
//!   [`Energy`]), plotted over the last seconds of fixed steps;
//! - **controls**: pause (P), single step while paused (N or `.`), time
//!   scale, and interpolation on or off (I) — the keys are ignored while
//!   egui has the keyboard;
//! - **an inspector**: pick a body by clicking it or from a list, then edit
//!   its [`Body`](crate::Body), [`Damping`](crate::Damping), substeps,
//!   [`SleepingDisabled`](crate::SleepingDisabled) and its springs.
//!
//! Pressing the left mouse button on a dynamic body also drags it, on a
//! stiff damped spring to the cursor, until the button is released. Gizmos
//! draw springs coloured by strain, bodies coloured by state, and velocity
//! arrows. Every toggle is a field of [`DebugUiSettings`].
//!
//! The plugin changes nothing in the simulation unless you edit something:
//! it only reads bodies, and writes a component only when its value was
//! edited (so sleeping islands stay asleep and results stay bit for bit
//! the same).

mod drag;
mod energy;
mod gizmos;
mod panel;
mod stats;
#[cfg(test)]
mod tests;

use bevy::app::{RunFixedMainLoop, RunFixedMainLoopSystems};
use bevy::prelude::*;
use bevy_egui::input::egui_wants_any_keyboard_input;
use bevy_egui::{EguiPlugin, EguiPrimaryContextPass};

pub use drag::pick_body;
pub use energy::Energy;

use crate::{InterpolationSystems, PhysicsSystems};

/// The debugging panel and gizmos: add it after `DefaultPlugins` and
/// [`EulerPhysicsPlugin`](crate::EulerPhysicsPlugin).
///
/// It adds bevy_egui's `EguiPlugin` unless the app already has it (add
/// yours first if your app draws egui windows of its own), and
/// [`DebugUiSettings`] unless you inserted your own. It needs a window and
/// a camera: the panel is drawn in the primary window, and the first active
/// camera (lowest `order`) turns the cursor into a point in the world.
///
/// Keys (ignored while egui has the keyboard, and all off with
/// [`DebugUiSettings::keyboard_shortcuts`]): F1 shows or hides the panel,
/// P pauses and resumes, N or `.` runs one fixed step while paused, I turns
/// interpolation on and off.
///
/// # Example
///
/// ```no_run
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// App::new()
///     .add_plugins((DefaultPlugins, EulerPhysicsPlugin, EulerPhysicsDebugPlugin))
///     .run();
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct EulerPhysicsDebugPlugin;

impl Plugin for EulerPhysicsDebugPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<EguiPlugin>() {
            app.add_plugins(EguiPlugin::default());
        }
        app.add_plugins(DebugCorePlugin)
            .add_systems(
                RunFixedMainLoop,
                (
                    drag::update_pointer.in_set(DebugSystems::Pointer),
                    stats::keyboard
                        .in_set(DebugSystems::Keys)
                        .run_if(keyboard_enabled)
                        .run_if(not(egui_wants_any_keyboard_input)),
                ),
            )
            .add_systems(
                Update,
                gizmos::draw_gizmos.after(InterpolationSystems::Interpolate),
            )
            .add_systems(EguiPrimaryContextPass, panel::panel);
    }
}

fn keyboard_enabled(
    settings: Res<DebugUiSettings>,
    keys: Option<Res<ButtonInput<KeyCode>>>,
) -> bool {
    settings.keyboard_shortcuts && keys.is_some()
}

/// What the debug plugin shows and does. Insert your own before or after
/// adding [`EulerPhysicsDebugPlugin`] to change the defaults; the panel
/// edits it too.
///
/// # Example
///
/// ```
/// use bevy::prelude::*;
/// use bevy_euler_physics::prelude::*;
///
/// let mut app = App::new();
/// // Start with the panel hidden (F1 shows it) and velocity arrows on.
/// app.insert_resource(DebugUiSettings {
///     show_panel: false,
///     draw_velocities: true,
///     ..default()
/// });
/// ```
#[derive(Resource, Reflect, Debug, Clone, Copy, PartialEq)]
#[reflect(Resource, Default, Debug, PartialEq, Clone)]
pub struct DebugUiSettings {
    /// Whether the "Physics" window is shown (F1 toggles it). Default: true.
    pub show_panel: bool,
    /// Whether the keys F1, P, N, `.` and I act. Default: true.
    pub keyboard_shortcuts: bool,
    /// Whether the energy of the scene is recorded after every fixed step
    /// and plotted. Default: true.
    pub energy_plot: bool,
    /// How many seconds of fixed-step time the energy plot keeps.
    /// Default: 10.
    pub energy_history_seconds: f32,
    /// Whether clicking in the world picks the body under the cursor for
    /// the inspector. Default: true.
    pub mouse_picking: bool,
    /// Whether pressing the left button on a dynamic body drags it (needs
    /// `mouse_picking`). Default: true.
    pub mouse_drag: bool,
    /// The drag spring's natural frequency, in Hz, lowered when needed so
    /// that the spring alone uses at most 60 % of the stability limit of
    /// the body's pass step. Default: 4.
    pub drag_frequency_hz: f32,
    /// Draw springs, coloured by strain: blue compressed, white at rest,
    /// red stretched. Default: true.
    pub draw_springs: bool,
    /// Draw bodies as circles: green awake, blue asleep, grey fixed.
    /// Default: true.
    pub draw_bodies: bool,
    /// Draw each awake body's velocity as an arrow. Default: false.
    pub draw_velocities: bool,
    /// The arrow of a velocity `v` is `v · velocity_arrow_seconds` long, in
    /// metres. Default: 0.1.
    pub velocity_arrow_seconds: f32,
    /// The strain at which a spring is drawn fully red (stretched) or fully
    /// blue (compressed). Default: 0.2 (20 %).
    pub full_strain: f32,
    /// The radius, in screen pixels, with which bodies without a
    /// [`Radius`](crate::Radius) are drawn and picked. Default: 5.
    pub body_radius_px: f32,
    /// How far from a body's centre, in screen pixels, a click still picks
    /// it (bodies larger than this are picked anywhere inside).
    /// Default: 12.
    pub pick_radius_px: f32,
}

impl Default for DebugUiSettings {
    fn default() -> Self {
        Self {
            show_panel: true,
            keyboard_shortcuts: true,
            energy_plot: true,
            energy_history_seconds: 10.0,
            mouse_picking: true,
            mouse_drag: true,
            drag_frequency_hz: 4.0,
            draw_springs: true,
            draw_bodies: true,
            draw_velocities: false,
            velocity_arrow_seconds: 0.1,
            full_strain: 0.2,
            body_radius_px: 5.0,
            pick_radius_px: 12.0,
        }
    }
}

/// The order of the plugin's systems in [`RunFixedMainLoop`], before the
/// fixed steps of the frame.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum DebugSystems {
    /// The cursor as a ray in the world, and the mouse buttons.
    Pointer,
    /// The keyboard shortcuts.
    Keys,
    /// Picking and dragging.
    Drag,
    /// The single-step request, and the step clock's start.
    BeforeSteps,
}

/// Everything but the window: readouts, energy, controls, picking and
/// dragging. Runs headless (tests), fed through [`drag::Pointer`].
pub(crate) struct DebugCorePlugin;

impl Plugin for DebugCorePlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<DebugUiSettings>()
            .register_type::<DebugUiSettings>()
            .init_resource::<stats::DebugStats>()
            .init_resource::<stats::StepClock>()
            .init_resource::<stats::StepRequest>()
            .init_resource::<energy::EnergyHistory>()
            .init_resource::<drag::Pointer>()
            .init_resource::<drag::DragState>()
            .init_resource::<Selection>()
            .configure_sets(
                RunFixedMainLoop,
                (
                    DebugSystems::Pointer,
                    DebugSystems::Keys,
                    DebugSystems::Drag,
                    DebugSystems::BeforeSteps,
                )
                    .chain()
                    .in_set(RunFixedMainLoopSystems::BeforeFixedMainLoop),
            )
            .add_systems(
                RunFixedMainLoop,
                (
                    drag::pointer_actions.in_set(DebugSystems::Drag),
                    stats::begin_fixed_loop.in_set(DebugSystems::BeforeSteps),
                    (stats::end_fixed_loop, stats::update_stats)
                        .chain()
                        .in_set(RunFixedMainLoopSystems::AfterFixedMainLoop),
                ),
            )
            .add_systems(
                FixedUpdate,
                energy::record_energy.after(PhysicsSystems::Finish),
            );
    }
}

/// The body shown in the inspector.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Selection(pub(crate) Option<Entity>);
