//! The keys: space pauses the replay, `+`/`-` change its speed, `h` hides the HUD, `q` or Esc
//! quit (Esc only when no session is focused: then it returns, `pointer`).

use bevy::app::AppExit;
use bevy::prelude::*;

use super::{HudVisible, Replay};
use crate::logic::Selected;

pub(super) fn keys(
    input: Res<ButtonInput<KeyCode>>,
    replay: Res<Replay>,
    mut hud: ResMut<HudVisible>,
    selected: Option<Res<Selected>>,
    mut exit: MessageWriter<AppExit>,
) {
    let focused = selected.is_some_and(|s| s.0.is_some());
    if input.just_pressed(KeyCode::KeyQ) || (input.just_pressed(KeyCode::Escape) && !focused) {
        exit.write(AppExit::Success);
    }
    if input.just_pressed(KeyCode::KeyH) {
        hud.0 = !hud.0;
    }
    if let Some(r) = &replay.0 {
        if input.just_pressed(KeyCode::Space) {
            r.toggle_pause();
        }
        if input.just_pressed(KeyCode::Equal) || input.just_pressed(KeyCode::NumpadAdd) {
            r.set_speed(r.speed() * 2.0);
        }
        if input.just_pressed(KeyCode::Minus) || input.just_pressed(KeyCode::NumpadSubtract) {
            r.set_speed(r.speed() / 2.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use familiar_model::ReplayControl;

    use super::*;

    #[test]
    fn keys_pause_change_speed_hide_the_hud_and_quit() {
        let control = ReplayControl::new(1.0);
        let mut app = App::new();
        app.add_plugins(MinimalPlugins)
            .add_message::<AppExit>()
            .init_resource::<ButtonInput<KeyCode>>()
            .insert_resource(Replay(Some(control.clone())))
            .insert_resource(HudVisible(true))
            .add_systems(Update, keys);
        let press = |app: &mut App, key: KeyCode| {
            let mut input = app.world_mut().resource_mut::<ButtonInput<KeyCode>>();
            input.reset_all();
            input.press(key);
            app.update();
            let mut input = app.world_mut().resource_mut::<ButtonInput<KeyCode>>();
            input.release(key);
            input.clear();
        };
        press(&mut app, KeyCode::Space);
        assert!(control.paused());
        press(&mut app, KeyCode::Space);
        assert!(!control.paused());
        press(&mut app, KeyCode::Equal);
        press(&mut app, KeyCode::NumpadAdd);
        assert_eq!(control.speed(), 4.0);
        press(&mut app, KeyCode::Minus);
        assert_eq!(control.speed(), 2.0);
        press(&mut app, KeyCode::KeyH);
        assert!(!app.world().resource::<HudVisible>().0);
        let exits = |app: &App| app.world().resource::<Messages<AppExit>>().len();
        assert_eq!(exits(&app), 0);
        press(&mut app, KeyCode::KeyQ);
        assert!(exits(&app) > 0, "q quits");
    }
}
