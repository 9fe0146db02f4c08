//! Particles around each familiar: the burst of a victory (confetti) or of an error (sparks
//! for a tool, crackle for the API), and the motes of "think hard" and "ultrathink". Each
//! familiar keeps `world::PARTICLE_SLOTS` small square sprites as children; every frame they
//! take the places `crate::world` computes from the logic's `Effects`.

use bevy::prelude::*;

use super::PixelScale;
use crate::logic::Effects;
use crate::world::{PARTICLE_SLOTS, Particle, aura_count, aura_particle};

#[derive(Component)]
pub(crate) struct ParticleSlot(usize);

pub(super) fn attach_particles(mut commands: Commands, added: Query<Entity, Added<Effects>>) {
    for e in &added {
        let slots: Vec<Entity> = (0..PARTICLE_SLOTS)
            .map(|i| {
                commands
                    .spawn((
                        Sprite::from_color(Color::WHITE, Vec2::ONE),
                        Transform::default(),
                        Visibility::Hidden,
                        ParticleSlot(i),
                    ))
                    .id()
            })
            .collect();
        commands.entity(e).add_children(&slots);
    }
}

/// The particles a familiar shows now: its burst's, then its aura's, at most
/// [`PARTICLE_SLOTS`].
pub(crate) fn particles(fx: &Effects, t: f32) -> Vec<Particle> {
    let mut out = Vec::new();
    if let Some((burst, age)) = fx.burst {
        out.extend((0..burst.count()).filter_map(|i| burst.particle(i, age)));
    }
    let think = fx.aura();
    out.extend((0..aura_count(think)).filter_map(|i| aura_particle(think, i, t)));
    out.truncate(PARTICLE_SLOTS);
    out
}

pub(super) fn draw_particles(
    time: Res<Time>,
    scale: Res<PixelScale>,
    familiars: Query<(&Effects, &Children)>,
    mut slots: Query<(&ParticleSlot, &mut Sprite, &mut Transform, &mut Visibility)>,
) {
    let s = scale.0;
    let t = time.elapsed_secs();
    for (fx, children) in &familiars {
        let now = particles(fx, t);
        for child in children.iter() {
            let Ok((slot, mut sprite, mut tr, mut vis)) = slots.get_mut(child) else {
                continue;
            };
            match now.get(slot.0) {
                Some(p) => {
                    // Snapped to the art's pixel grid, like everything else.
                    let x = (p.x.round()) * s;
                    let y = (p.y.round()) * s;
                    tr.translation = Vec3::new(x, y, 8.0);
                    tr.scale = Vec3::splat(p.size * s);
                    sprite.color = Color::srgba_u8(p.color[0], p.color[1], p.color[2], p.color[3]);
                    *vis = Visibility::Inherited;
                }
                None => {
                    if *vis != Visibility::Hidden {
                        *vis = Visibility::Hidden;
                    }
                }
            }
        }
    }
}
