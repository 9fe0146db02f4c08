//! The window-wide HUD: the quest banner of the focused familiar, the log strip and the replay
//! status; and the clean-up of HUD nodes whose familiar left.

use bevy::prelude::*;

use super::{HudOf, HudVisible, LogPanel, LogText, QuestBanner, QuestText, Replay, StatusText};
use crate::logic::{Familiar, Focus, LogStrip, Quest};

#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn draw_hud(
    focus: Res<Focus>,
    familiars: Query<(&Familiar, &Quest)>,
    log: Res<LogStrip>,
    replay: Res<Replay>,
    hud_visible: Res<HudVisible>,
    mut banner: Query<&mut Visibility, (With<QuestBanner>, Without<LogPanel>)>,
    mut panel: Query<&mut Visibility, (With<LogPanel>, Without<QuestBanner>)>,
    mut quest_text: Query<&mut Text, (With<QuestText>, Without<LogText>, Without<StatusText>)>,
    mut log_text: Query<&mut Text, (With<LogText>, Without<QuestText>, Without<StatusText>)>,
    mut status: Query<&mut Text, (With<StatusText>, Without<QuestText>, Without<LogText>)>,
) {
    let several = familiars.iter().count() > 1;
    let quest = focus
        .0
        .and_then(|e| familiars.get(e).ok())
        .and_then(|(f, q)| {
            q.0.as_ref().map(|text| {
                if several {
                    format!("Quest ({}): {text}", f.label)
                } else {
                    format!("Quest: {text}")
                }
            })
        });
    if let Ok(mut vis) = banner.single_mut() {
        *vis = if quest.is_some() && hud_visible.0 {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
    }
    if let (Some(q), Ok(mut text)) = (quest, quest_text.single_mut())
        && text.0 != q
    {
        text.0 = q;
    }
    if let Ok(mut vis) = panel.single_mut() {
        *vis = if !log.lines.is_empty() && hud_visible.0 {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
    }
    if log.is_changed()
        && let Ok(mut text) = log_text.single_mut()
    {
        text.0 = log.lines.iter().cloned().collect::<Vec<_>>().join("\n");
    }
    if let Ok(mut text) = status.single_mut() {
        let want = match &replay.0 {
            Some(r) if r.paused() => format!("PAUSED  x{}", speed_label(r.speed())),
            Some(r) => format!("x{}", speed_label(r.speed())),
            None => String::new(),
        };
        let want = if hud_visible.0 { want } else { String::new() };
        if text.0 != want {
            text.0 = want;
        }
    }
}

pub(super) fn speed_label(speed: f64) -> String {
    if speed >= 10.0 {
        format!("{speed:.0}")
    } else {
        format!("{speed:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

pub(super) fn despawn_orphan_huds(
    mut commands: Commands,
    huds: Query<(Entity, &HudOf)>,
    familiars: Query<(), With<Familiar>>,
) {
    for (e, of) in &huds {
        if familiars.get(of.0).is_err() {
            commands.entity(e).despawn();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_read_well() {
        assert_eq!(speed_label(1.0), "1");
        assert_eq!(speed_label(0.5), "0.5");
        assert_eq!(speed_label(0.25), "0.25");
        assert_eq!(speed_label(64.0), "64");
    }
}
