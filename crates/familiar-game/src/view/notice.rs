//! The pipeline's own word in the middle of the scene (`logic::Notice`): where it looks for
//! sessions while there is none (an empty landscape says nothing by itself), and, when a
//! replay or the demo is over, that it is and what to do next. Part of `view`.

use bevy::prelude::*;

use super::layout::MARGIN;
use super::text::{PixelText, set_text, ui_text};
use super::{HudRoot, PLATE_BG, rgb};
use crate::logic::{Familiar, Notice};

/// The notice's box.
#[derive(Component)]
pub(super) struct NoticeBox;

/// Its text.
#[derive(Component)]
pub(super) struct NoticeText;

/// Width of the box, in canvas pixels.
const WIDTH: f32 = 300.0;
/// Lines of text at most.
const LINES: usize = 4;

/// The text to show: the end of a replay first, else where Familiar looks while no session
/// is there; `None` for nothing.
pub fn notice_text(notice: &Notice, sessions: usize) -> Option<String> {
    if let Some(ended) = &notice.ended {
        return Some(ended.clone());
    }
    notice
        .waiting
        .as_ref()
        .filter(|_| sessions == 0)
        .map(|place| format!("No session yet. Looking in {place}"))
}

pub(super) fn spawn_notice(mut commands: Commands) {
    commands
        .spawn((
            Node {
                position_type: PositionType::Absolute,
                width: Val::Px(WIDTH),
                padding: UiRect::axes(Val::Px(6.0), Val::Px(3.0)),
                border: UiRect::all(Val::Px(1.0)),
                border_radius: BorderRadius::all(Val::Px(3.0)),
                ..default()
            },
            BackgroundColor(rgb(PLATE_BG)),
            BorderColor::all(rgb([255, 230, 140])),
            HudRoot,
            NoticeBox,
            Visibility::Hidden,
        ))
        .with_child((
            ui_text(
                PixelText::new("", rgb([255, 240, 200]))
                    .with_max_width((WIDTH - 14.0) as u32)
                    .with_max_lines(LINES),
            ),
            NoticeText,
        ));
}

/// Shows the notice, or hides it: the end of a replay over the log strip (its newest lines
/// are the replay's last: nothing else of the scene is covered), where Familiar looks in the
/// middle of the empty scene.
pub(super) fn draw_notice(
    notice: Res<Notice>,
    all: Query<(Entity, &Familiar)>,
    mut boxes: Query<(&mut Node, &mut Visibility), With<NoticeBox>>,
    mut texts: Query<&mut PixelText, With<NoticeText>>,
) {
    // Nearly always nothing to say: keep the box hidden without laying the scene out.
    if notice.waiting.is_none() && notice.ended.is_none() {
        for (_, mut vis) in &mut boxes {
            if *vis != Visibility::Hidden {
                *vis = Visibility::Hidden;
            }
        }
        return;
    }
    let (order, l) = super::row(&all);
    let want = notice_text(&notice, order.len());
    for (mut node, mut vis) in &mut boxes {
        let canvas = super::canvas::canvas_size();
        match l.log_rect().filter(|_| notice.ended.is_some()) {
            Some(log) => {
                node.left = Val::Px(log.min.x);
                node.top = Val::Px(log.min.y);
                node.width = Val::Px(log.width());
                node.height = Val::Px(log.height());
            }
            None => {
                node.left = Val::Px(((canvas.x - WIDTH) / 2.0).max(MARGIN));
                node.top = Val::Px(canvas.y * 0.45);
                node.width = Val::Px(WIDTH);
                node.height = Val::Auto;
            }
        }
        let shown = if want.is_some() {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
        if *vis != shown {
            *vis = shown;
        }
    }
    if let Some(text) = want {
        let width = match l.log_rect().filter(|_| notice.ended.is_some()) {
            Some(log) => log.width(),
            None => WIDTH,
        };
        for mut label in &mut texts {
            let max = Some((width - 14.0).max(0.0) as u32);
            if label.max_width != max {
                label.max_width = max;
            }
            set_text(&mut label, text.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replays_end_is_said_and_where_familiar_looks_only_while_nothing_is_there() {
        let mut notice = Notice::default();
        assert_eq!(notice_text(&notice, 0), None);
        notice.waiting = Some("~/.claude/projects/-home-u-app".into());
        assert_eq!(
            notice_text(&notice, 0).as_deref(),
            Some("No session yet. Looking in ~/.claude/projects/-home-u-app")
        );
        assert_eq!(notice_text(&notice, 1), None, "a session came");
        notice.ended = Some("The demo is over.".into());
        assert_eq!(
            notice_text(&notice, 1).as_deref(),
            Some("The demo is over.")
        );
    }
}
