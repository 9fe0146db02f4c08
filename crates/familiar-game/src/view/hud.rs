//! The window-wide HUD: the quest banner of the focused familiar, the log strip and the replay
//! status; and the clean-up of HUD nodes whose familiar left.

use bevy::prelude::*;

use super::layout::LOG_LINES;
use super::text::{PixelText, set_text};
use super::{
    HudOf, HudVisible, LogPanel, LogText, QuestBanner, QuestText, Replay, StatusPlate, StatusText,
    fit, row,
};
use crate::logic::{Familiar, Focus, LogStrip, Quest};

/// The three window-wide boxes, each in its own rectangle of the layout.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum HudBox {
    Banner,
    Log,
    Status,
}

/// Which of the three window-wide boxes a UI root is.
#[allow(clippy::type_complexity)]
fn which(
    banner: Option<&QuestBanner>,
    panel: Option<&LogPanel>,
    status: Option<&StatusPlate>,
) -> Option<HudBox> {
    match (banner, panel, status) {
        (Some(_), _, _) => Some(HudBox::Banner),
        (_, Some(_), _) => Some(HudBox::Log),
        (_, _, Some(_)) => Some(HudBox::Status),
        _ => None,
    }
}

#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn draw_hud(
    focus: Res<Focus>,
    all: Query<(Entity, &Familiar)>,
    familiars: Query<(&Familiar, &Quest)>,
    log: Res<LogStrip>,
    time: Res<Time>,
    mut log_changed: Local<(u64, f32)>,
    replay: Res<Replay>,
    hud_visible: Res<HudVisible>,
    mut boxes: Query<
        (
            &mut Node,
            &mut Visibility,
            Option<&QuestBanner>,
            Option<&LogPanel>,
            Option<&StatusPlate>,
        ),
        Or<(With<QuestBanner>, With<LogPanel>, With<StatusPlate>)>,
    >,
    mut quest_text: Query<&mut PixelText, (With<QuestText>, Without<LogText>, Without<StatusText>)>,
    mut log_text: Query<&mut PixelText, (With<LogText>, Without<QuestText>, Without<StatusText>)>,
    mut status: Query<&mut PixelText, (With<StatusText>, Without<QuestText>, Without<LogText>)>,
) {
    let (_, l) = row(&all);
    let now = time.elapsed_secs();
    if log_changed.0 != log.version {
        *log_changed = (log.version, now);
    }
    let log_shown = !log.lines.is_empty() && log_fresh(log_changed.1, now);
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
    let speed = match &replay.0 {
        Some(r) if r.paused() => format!("PAUSED x{}", speed_label(r.speed())),
        Some(r) => format!("x{}", speed_label(r.speed())),
        None => String::new(),
    };
    for (mut node, mut vis, b, p, s) in &mut boxes {
        let Some(kind) = which(b, p, s) else {
            continue;
        };
        let (rect, show) = match kind {
            HudBox::Banner => (l.banner_rect(), quest.is_some()),
            HudBox::Log => match l.log_rect() {
                Some(r) => (r, log_shown),
                None => (Rect::default(), false),
            },
            HudBox::Status => (l.status_rect(), !speed.is_empty()),
        };
        node.left = px(rect.min.x);
        node.top = px(rect.min.y);
        node.width = px(rect.width());
        node.height = px(rect.height());
        let want = if show && hud_visible.0 {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
        if *vis != want {
            *vis = want;
        }
    }
    // Inside the border and the padding.
    let banner_width = l.banner_rect().width() - 12.0;
    if let (Some(q), Ok(mut text)) = (quest, quest_text.single_mut()) {
        set_text(&mut text, fit(&q, banner_width));
    }
    if let Ok(mut text) = log_text.single_mut() {
        let width = l.log_rect().map_or(0.0, |r| r.width() - 10.0);
        let skip = log.lines.len().saturating_sub(LOG_LINES);
        let want = log
            .lines
            .iter()
            .skip(skip)
            .map(|line| fit(line, width))
            .collect::<Vec<_>>()
            .join("\n");
        set_text(&mut text, want);
    }
    if let Ok(mut text) = status.single_mut() {
        set_text(&mut text, fit(&speed, l.status_rect().width() - 8.0));
    }
}

/// How long the log strip stays after its last new line: long enough to read a few lines,
/// short enough that an unlock or a script's log line does not cover the sky for good (issue
/// 27). A new line brings it back with the lines before it.
pub(super) const LOG_SHOW_SECS: f32 = 12.0;

/// Whether the log strip, last changed at `changed` (game seconds), shows at `now`.
pub(super) fn log_fresh(changed: f32, now: f32) -> bool {
    now - changed < LOG_SHOW_SECS
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

/// The log strip's text colour.
pub(super) const LOG_TEXT: [u8; 3] = [210, 220, 255];
/// The log strip's background: dark and opaque, like the plates, so that no star, sun, cloud or
/// raindrop behind it shows through its text (at 85 %, and still at 94 %, the sparkle of a
/// star showed as a grey cross over the letters).
pub(super) const LOG_BACKGROUND: ([u8; 3], f32) = ([13, 8, 26], 1.0);

pub(super) fn log_background() -> Color {
    let ([r, g, b], a) = LOG_BACKGROUND;
    Color::srgba_u8(r, g, b, (a * 255.0).round() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_strip_shows_for_a_while_after_each_new_line() {
        assert!(log_fresh(3.0, 3.0));
        assert!(log_fresh(3.0, 3.0 + LOG_SHOW_SECS - 0.1));
        assert!(!log_fresh(3.0, 3.0 + LOG_SHOW_SECS));
        assert!(
            !log_fresh(0.0, 3600.0),
            "an unlock long ago no longer covers the sky"
        );
    }

    /// WCAG's relative luminance of an sRGB colour.
    fn luminance(c: [f32; 3]) -> f32 {
        let lin = |v: f32| {
            let v = v / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])
    }

    /// Issue 14: the log strip must read over every sky. Its background blended over the
    /// brightest pixel of every backdrop and of the world's props (clouds, sun, moon), and over
    /// white, keeps the text at a contrast of 7:1 (WCAG AAA) at least.
    #[test]
    fn the_log_strip_reads_over_every_sky() {
        let mut brightest = [255.0f32; 3];
        let mut max = luminance(brightest);
        for png in [crate::assets::SKY_PNG, crate::assets::WORLD_PNG] {
            let img = image::load_from_memory(png).expect("decodes").to_rgba8();
            for p in img.pixels() {
                let c = [p[0] as f32, p[1] as f32, p[2] as f32];
                if p[3] > 0 && luminance(c) > max {
                    (brightest, max) = (c, luminance(c));
                }
            }
        }
        let (bg, alpha) = LOG_BACKGROUND;
        for behind in [brightest, [255.0; 3], [0.0; 3]] {
            let blended: [f32; 3] =
                std::array::from_fn(|i| bg[i] as f32 * alpha + behind[i] * (1.0 - alpha));
            let text = luminance(LOG_TEXT.map(f32::from));
            let ratio = (text + 0.05) / (luminance(blended) + 0.05);
            assert!(ratio >= 7.0, "contrast {ratio:.1} over {behind:?}");
        }
    }

    #[test]
    fn speeds_read_well() {
        assert_eq!(speed_label(1.0), "1");
        assert_eq!(speed_label(0.5), "0.5");
        assert_eq!(speed_label(0.25), "0.25");
        assert_eq!(speed_label(64.0), "64");
    }
}
