//! The pointer: which bar it is over (its exact figures show in a tooltip, `panel`), and
//! clicks that focus a session (a familiar or its plate: its card shows) or return (a click
//! on empty space; Esc too, which quits only when nothing is focused: `input`). Hits are the
//! layout's ([`super::layout::Layout::hit`]), in its coordinates; [`PointerAt`] is the pointer
//! there, set from the window by `track` (tests set it by hand).

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::layout::Hit;
use super::{cursor_to_canvas, row};
use crate::logic::{Bar, Familiar, Hovered, LogicSet, Selected};

/// The pointer in layout coordinates (canvas pixels from the canvas's top-left corner);
/// `None` outside the window or over the letterbox bars.
#[derive(Resource, Debug, Clone, Copy, Default, PartialEq)]
pub struct PointerAt(pub Option<Vec2>);

/// Focus and hover from the pointer and Esc: [`Selected`] and [`Hovered`].
pub struct FocusPlugin;

impl Plugin for FocusPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<PointerAt>()
            .init_resource::<ButtonInput<MouseButton>>()
            .init_resource::<ButtonInput<KeyCode>>()
            .init_resource::<Selected>()
            .init_resource::<Hovered>()
            .add_systems(Update, point.after(LogicSet));
    }
}

pub(super) fn track(window: Query<&Window, With<PrimaryWindow>>, mut at: ResMut<PointerAt>) {
    let p = window.single().ok().and_then(cursor_to_canvas);
    if at.0 != p {
        at.0 = p;
    }
}

pub(super) fn point(
    familiars: Query<(Entity, &Familiar)>,
    at: Res<PointerAt>,
    buttons: Res<ButtonInput<MouseButton>>,
    keys: Res<ButtonInput<KeyCode>>,
    mut selected: ResMut<Selected>,
    mut hovered: ResMut<Hovered>,
) {
    let (order, l) = row(&familiars);
    if selected.0.is_some_and(|e| !order.contains(&e)) {
        selected.0 = None;
    }
    if keys.just_pressed(KeyCode::Escape) && selected.0.is_some() {
        selected.0 = None;
    }
    let focused = selected.0.is_some() && l.card_rect().is_some();
    let hit = match at.0 {
        Some(p) if !order.is_empty() => l.hit(p, focused),
        _ => Hit::Nothing,
    };
    let over = match hit {
        Hit::ManaBar(i) => order.get(i).map(|e| (*e, Bar::Mana)),
        Hit::XpBar(i) => order.get(i).map(|e| (*e, Bar::Xp)),
        Hit::Name(i) => order.get(i).map(|e| (*e, Bar::Name)),
        _ => None,
    };
    if hovered.0 != over {
        hovered.0 = over;
    }
    if at.0.is_some() && buttons.just_pressed(MouseButton::Left) {
        let want = match hit {
            Hit::ManaBar(i) | Hit::XpBar(i) | Hit::Name(i) | Hit::Familiar(i) => {
                order.get(i).copied()
            }
            Hit::Card => selected.0,
            Hit::Nothing => None,
        };
        if selected.0 != want {
            selected.0 = want;
        }
    }
}
