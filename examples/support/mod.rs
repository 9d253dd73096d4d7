//! Shared by the windowed examples: a capture mode for the screenshot tests
//! and the README.
//!
//! With `EULER_CAPTURE=path.png` set, an example advances its clock by
//! exactly 1/60 s per frame (whatever the real frame time, so the scene is
//! the same on a fast GPU and on a software renderer), saves a screenshot of
//! its window after `EULER_CAPTURE_FRAMES` frames (default 180) with Bevy's
//! screenshot API, and exits: with success once the file is written, with
//! an error if it could not be.

#[cfg(feature = "model-assets")]
pub mod parts;
// Only `spring_rope` times parts of its frames.
#[allow(dead_code)]
pub mod part_times;

use std::time::Duration;

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::time::TimeUpdateStrategy;

/// A 2D camera showing the world at `pixels_per_metre`, centred on
/// `centre` (in metres).
#[allow(dead_code)]
pub fn camera(pixels_per_metre: f32, centre: Vec2) -> impl Bundle {
    (
        Camera2d,
        Projection::Orthographic(OrthographicProjection {
            scale: 1.0 / pixels_per_metre,
            ..OrthographicProjection::default_2d()
        }),
        Transform::from_translation(centre.extend(0.0)),
    )
}

/// The 3D examples' light: a sun from above and in front, without
/// shadows, and an ambient light of `ambient`.
#[allow(dead_code)]
pub fn daylight(commands: &mut Commands, ambient: f32) {
    commands.spawn((
        DirectionalLight {
            illuminance: 9000.0,
            shadow_maps_enabled: false,
            ..default()
        },
        Transform::from_xyz(3.0, 6.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    commands.insert_resource(GlobalAmbientLight {
        brightness: ambient,
        ..default()
    });
}

/// A net of `n × n` knots `spacing` apart in the horizontal plane
/// through `corner` (its first knot), each a body of `mass` with a
/// radius and a drag, joined to its neighbours by springs of `stiffness`
/// (damping 0.2); the corners fixed, or with `border` the whole border.
/// Drawn as white balls.
#[allow(dead_code)]
pub struct Net {
    pub corner: Vec3,
    pub n: usize,
    pub spacing: f32,
    pub mass: f32,
    pub radius: f32,
    pub drag: f32,
    pub stiffness: f32,
    pub border: bool,
}

impl Net {
    /// Spawns the net's knots and springs.
    #[allow(dead_code)]
    pub fn spawn(
        &self,
        commands: &mut Commands,
        meshes: &mut Assets<Mesh>,
        materials: &mut Assets<StandardMaterial>,
    ) {
        use bevy_euler_physics::prelude::{Body, Damping, Radius, Spring};
        let n = self.n;
        let knot = meshes.add(Sphere::new(self.radius));
        let white = materials.add(Color::srgb(0.95, 0.95, 0.95));
        let mut knots = Vec::new();
        for i in 0..n {
            for j in 0..n {
                let at = self.corner + Vec3::new(i as f32, 0.0, j as f32) * self.spacing;
                let edge = |k: usize| k == 0 || k == n - 1;
                let fixed = if self.border {
                    edge(i) || edge(j)
                } else {
                    edge(i) && edge(j)
                };
                let body = if fixed {
                    Body::fixed(at)
                } else {
                    Body::new(self.mass).with_position(at)
                };
                let looks = (Mesh3d(knot.clone()), MeshMaterial3d(white.clone()));
                let knot = (body, Radius(self.radius), Damping(self.drag), looks);
                knots.push(commands.spawn(knot).id());
            }
        }
        for i in 0..n {
            for j in 0..n {
                let k = i * n + j;
                for other in [(i + 1 < n).then(|| k + n), (j + 1 < n).then(|| k + 1)]
                    .into_iter()
                    .flatten()
                {
                    let spring = Spring::new(knots[k], knots[other], self.spacing, self.stiffness);
                    commands.spawn(spring.with_damping(0.2));
                }
            }
        }
    }
}

/// A mesh of the triangles `indices` (three to a triangle) over
/// `positions`, with smooth normals.
#[allow(dead_code)]
pub fn triangle_mesh(positions: Vec<[f32; 3]>, indices: Vec<u32>) -> Mesh {
    use bevy::asset::RenderAssetUsages;
    use bevy::mesh::{Indices, PrimitiveTopology};
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices))
    .with_computed_smooth_normals()
}

/// Whether the screenshot tests run the example (`EULER_CAPTURE` is set).
#[allow(dead_code)]
pub fn capturing() -> bool {
    std::env::var_os("EULER_CAPTURE").is_some()
}

/// A text readout in the window's top right corner, in `color`.
#[allow(dead_code)]
pub fn readout(color: Color) -> impl Bundle {
    (
        Text::new(""),
        TextFont {
            font_size: FontSize::Px(17.0),
            ..default()
        },
        TextColor(color),
        Node {
            position_type: PositionType::Absolute,
            top: Val::Px(12.0),
            right: Val::Px(16.0),
            ..default()
        },
    )
}

/// Frames after which the capture gives up waiting for the screenshot.
const PATIENCE: u32 = 600;

/// Adds the capture mode when `EULER_CAPTURE` is set; does nothing otherwise.
pub struct CapturePlugin;

#[derive(Resource)]
struct Capture {
    path: String,
    frames: u32,
    frame: u32,
}

impl Plugin for CapturePlugin {
    fn build(&self, app: &mut App) {
        let Ok(path) = std::env::var("EULER_CAPTURE") else {
            return;
        };
        let frames = match std::env::var("EULER_CAPTURE_FRAMES") {
            Ok(text) => text.parse().unwrap_or_else(|_| {
                panic!("EULER_CAPTURE_FRAMES must be a frame count, not {text:?}")
            }),
            Err(_) => 180,
        };
        app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f64(
            1.0 / 60.0,
        )))
        .insert_resource(Capture {
            path,
            frames,
            frame: 0,
        })
        .add_systems(Last, capture);
    }
}

fn capture(mut commands: Commands, mut capture: ResMut<Capture>, mut exit: MessageWriter<AppExit>) {
    capture.frame += 1;
    if capture.frame == capture.frames {
        let path = capture.path.clone();
        commands.spawn(Screenshot::primary_window()).observe(
            move |shot: On<ScreenshotCaptured>, mut exit: MessageWriter<AppExit>| {
                let saved = shot
                    .image
                    .clone()
                    .try_into_dynamic()
                    .map_err(|e| e.to_string())
                    .and_then(|image| image.to_rgb8().save(&path).map_err(|e| e.to_string()));
                match saved {
                    Ok(()) => {
                        info!("screenshot saved to {path}");
                        exit.write(AppExit::Success);
                    }
                    Err(e) => {
                        error!("could not save the screenshot to {path}: {e}");
                        exit.write(AppExit::error());
                    }
                }
            },
        );
    } else if capture.frame == capture.frames + PATIENCE {
        error!("no screenshot after {PATIENCE} frames");
        exit.write(AppExit::error());
    }
}
