//! The panel of what the agent is doing (quest, plan, last actions) beside a lone familiar or
//! under a party's plates; the focused session's card (its exact figures, plan and actions)
//! in place of the plates; the tooltip with a hovered bar's exact figures. The text is
//! `logic::doings`'s (pure), the rectangles `layout`'s; this module only places them. Every
//! text node is made by [`text`], the one place to change for another font or text API.

use bevy::prelude::*;

use super::layout::{PAD, PANEL_LINE};
use super::{HudVisible, PLATE_BG, PixelText, rgb, row, set_text, ui_text};
use crate::font;
use crate::logic::{
    Bar, Doings, Familiar, Focus, Hovered, Mana, Mark, Progress, Quest, Selected, SessionInfo,
    card_figures, mana_figures, name_figures, panel_lines, xp_figures,
};

/// A typical character's width in the pixel font: the budget `logic::doings` cuts its lines
/// to. The font is proportional (and CJK is twice as wide), so each line is also cut to its
/// box's exact width when drawn (`PixelText::with_max_width`).
const CHAR: f32 = 5.0;
const INK: [u8; 3] = [220, 226, 255];
/// The focus card's border and the mark under its familiar: the same gold ties them.
const CARD_BORDER: [u8; 3] = [255, 214, 102];
/// How long the panel stays on one session of a party before it follows another.
const PANEL_HOLD_SECS: f32 = 4.0;

#[derive(Component)]
pub(super) struct PanelBox;
#[derive(Component)]
pub(super) struct PanelText;
#[derive(Component)]
pub(super) struct CardBox;
#[derive(Component)]
pub(super) struct CardFigures;
#[derive(Component)]
pub(super) struct CardDoings;
#[derive(Component)]
pub(super) struct TooltipBox;
#[derive(Component)]
pub(super) struct TooltipText;
/// The bar under the focused familiar's feet.
#[derive(Component)]
pub(super) struct FocusMark;

/// A text node of the panel, the card or the tooltip.
fn text(color: [u8; 3]) -> impl Bundle {
    ui_text(PixelText::new("", rgb(color)))
}

fn boxed() -> Node {
    Node {
        position_type: PositionType::Absolute,
        overflow: Overflow::clip(),
        padding: UiRect::all(px(PAD)),
        border: UiRect::all(px(1)),
        border_radius: BorderRadius::all(px(3)),
        ..default()
    }
}

pub(super) fn spawn_panel(mut commands: Commands) {
    commands
        .spawn((
            boxed(),
            // Opaque, like the plates: no star shows through the text.
            BackgroundColor(rgb(PLATE_BG)),
            BorderColor::all(rgb([70, 56, 110])),
            Visibility::Hidden,
            PanelBox,
        ))
        .with_child((text(INK), PanelText));
    // Over the plates and bubbles it hides while a session is focused.
    let figures = commands
        .spawn((
            text([255, 240, 200]),
            Node {
                position_type: PositionType::Absolute,
                ..default()
            },
            CardFigures,
        ))
        .id();
    let doings = commands
        .spawn((
            text(INK),
            Node {
                position_type: PositionType::Absolute,
                ..default()
            },
            CardDoings,
        ))
        .id();
    commands
        .spawn((
            boxed(),
            BackgroundColor(rgb(PLATE_BG)),
            BorderColor::all(rgb(CARD_BORDER)),
            GlobalZIndex(10),
            Visibility::Hidden,
            CardBox,
        ))
        .add_children(&[figures, doings]);
    commands.spawn((
        Node {
            position_type: PositionType::Absolute,
            ..default()
        },
        BackgroundColor(rgb(CARD_BORDER)),
        Visibility::Hidden,
        FocusMark,
    ));
    commands
        .spawn((
            boxed(),
            BackgroundColor(rgb([252, 250, 255])),
            BorderColor::all(rgb([35, 22, 54])),
            GlobalZIndex(20),
            Visibility::Hidden,
            TooltipBox,
        ))
        .with_child((text([30, 20, 50]), TooltipText));
}

fn place(node: &mut Node, r: Rect) {
    let (left, top, width, height) = (px(r.min.x), px(r.min.y), px(r.width()), px(r.height()));
    if node.left != left || node.top != top || node.width != width || node.height != height {
        node.left = left;
        node.top = top;
        node.width = width;
        node.height = height;
    }
}

fn show(vis: &mut Visibility, on: bool) {
    let want = if on {
        Visibility::Inherited
    } else {
        Visibility::Hidden
    };
    if *vis != want {
        *vis = want;
    }
}

/// Sets the lines, each cut to `width` pixels (the budget in characters is an estimate).
fn set(text: &mut Mut<PixelText>, want: String, width: f32) {
    let width = width.max(0.0) as u32;
    if text.max_width != Some(width) {
        text.max_width = Some(width);
    }
    set_text(text, want);
}

/// The width text has inside a box of `width` (padding and border).
fn inside(width: f32) -> f32 {
    width - 2.0 * PAD - 2.0
}

/// Lines of text that fit `height` pixels inside the padding.
fn rows(height: f32) -> usize {
    ((height - 2.0 * PAD - 2.0) / PANEL_LINE).floor().max(0.0) as usize
}

/// Characters that fit `width` pixels inside the padding.
fn chars(width: f32) -> usize {
    ((width - 2.0 * PAD - 2.0) / CHAR).floor().max(0.0) as usize
}

/// What the card and panel show of one familiar.
type Shown<'a> = (
    &'a Familiar,
    &'a Mana,
    &'a Progress,
    &'a Mark,
    &'a SessionInfo,
    &'a Quest,
    Option<&'a Doings>,
);

/// The card's text: figures, then plan and actions under them; side by side in a card too
/// short for both (and wide enough). Returns where each block goes inside the card, its
/// lines, and the card's height for them.
fn card_text(
    card: Rect,
    shown: Shown,
    now: f32,
) -> ((Vec2, f32, String), (Vec2, f32, String), f32) {
    let (familiar, mana, progress, mark, info, _, doings) = shown;
    let empty = Doings::default();
    let doings = doings.unwrap_or(&empty);
    let title = match (info.name(false), &info.branch) {
        (Some(p), Some(b)) => format!("{p} ({b})"),
        (Some(p), None) => p,
        _ => familiar.label.clone(),
    };
    let inner = card.width() - 2.0 * PAD - 2.0;
    let total_rows = rows(card.height());
    let status = (mark.0, info.held(now));
    let stacked = total_rows >= 12 || inner < 400.0;
    let figures_width = if stacked {
        inner
    } else {
        (inner * 0.5).min(300.0)
    };
    let figures = card_figures(
        &title,
        doings,
        mana,
        status,
        progress,
        chars(figures_width + 2.0 * PAD + 2.0),
    );
    let figures: Vec<String> = figures.into_iter().take(total_rows).collect();
    let (doings_at, doings_width, doings_rows) = if stacked {
        let below = figures.len() + 1;
        (
            Vec2::new(0.0, below as f32 * PANEL_LINE),
            inner,
            total_rows.saturating_sub(below),
        )
    } else {
        (
            Vec2::new(figures_width + 8.0, 0.0),
            inner - figures_width - 8.0,
            total_rows,
        )
    };
    // The card is this session's: its quest shows whatever the banner says.
    let lines = panel_lines(
        doings,
        None,
        chars(doings_width + 2.0 * PAD + 2.0),
        doings_rows,
    );
    let used_rows = if stacked {
        figures.len() + 1 + lines.len()
    } else {
        figures.len().max(lines.len())
    };
    let height = used_rows as f32 * PANEL_LINE + 2.0 * PAD + 4.0;
    (
        (Vec2::ZERO, figures_width, figures.join("\n")),
        (doings_at, doings_width, lines.join("\n")),
        height.min(card.height()),
    )
}

#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(super) fn draw_panel(
    all: Query<(Entity, &Familiar)>,
    familiars: Query<Shown>,
    focus: Res<Focus>,
    selected: Res<Selected>,
    hovered: Res<Hovered>,
    hud: Res<HudVisible>,
    time: Res<Time>,
    mut shown_since: Local<(Option<Entity>, f32)>,
    mut boxes: Query<
        (
            &mut Node,
            &mut Visibility,
            Has<PanelBox>,
            Has<CardBox>,
            Has<TooltipBox>,
        ),
        Or<(
            With<PanelBox>,
            With<CardBox>,
            With<TooltipBox>,
            With<FocusMark>,
        )>,
    >,
    mut texts: Query<
        (
            &mut PixelText,
            Option<&mut Node>,
            Has<PanelText>,
            Has<CardFigures>,
            Has<CardDoings>,
        ),
        (
            Or<(
                With<PanelText>,
                With<CardFigures>,
                With<CardDoings>,
                With<TooltipText>,
            )>,
            Without<PanelBox>,
            Without<CardBox>,
            Without<TooltipBox>,
            Without<FocusMark>,
        ),
    >,
) {
    let now = time.elapsed_secs();
    let (order, l) = row(&all);
    let several = order.len() > 1;
    // The card: the clicked session, while there is room for it.
    let card = selected
        .0
        .and_then(|e| familiars.get(e).ok())
        .zip(l.card_rect())
        .filter(|_| hud.0);
    // The panel: the most recently active session's, when nothing is focused; it stays on a
    // session for a while, so that a party's interleaved events do not make it flicker.
    let latest = focus.0.or(order.first().copied());
    let (owner, since) = &mut *shown_since;
    let stale = owner.is_none_or(|e| !order.contains(&e)) || now - *since >= PANEL_HOLD_SECS;
    if stale && latest != *owner {
        *owner = latest;
        *since = now;
    }
    let panel = owner
        .and_then(|e| familiars.get(e).ok())
        .zip(l.panel_rect())
        .filter(|_| hud.0 && card.is_none());
    let panel_lines_now = panel.and_then(|(shown, r)| {
        let (familiar, _, _, _, _, quest, doings) = shown;
        let doings = doings?;
        let mut max = rows(r.height());
        let mut lines = Vec::new();
        if several {
            lines.push(familiar.label.clone());
            max = max.saturating_sub(1);
        }
        let body = panel_lines(doings, quest.0.as_deref(), chars(r.width()), max);
        if body.is_empty() {
            return None;
        }
        lines.extend(body);
        // The box ends under its last line.
        let height = lines.len() as f32 * PANEL_LINE + 2.0 * PAD + 4.0;
        let r = Rect::new(r.min.x, r.min.y, r.max.x, r.min.y + height.min(r.height()));
        Some((r, lines.join("\n"), inside(r.width())))
    });
    let card_now = card.map(|(shown, r)| {
        let (figures, doings, height) = card_text(r, shown, now);
        let r = Rect::new(r.min.x, r.min.y, r.max.x, r.min.y + height);
        (r, (figures, doings))
    });
    let tooltip = hovered
        .0
        .filter(|_| hud.0 && card.is_none())
        .and_then(|(e, bar)| {
            let i = order.iter().position(|x| *x == e)?;
            let (familiar, mana, progress, _, info, ..) = familiars.get(e).ok()?;
            let (anchor, words) = match bar {
                Bar::Mana => (l.mana_bar_rect(i), mana_figures(mana)),
                Bar::Xp => (l.xp_bar_rect(i)?, xp_figures(progress)),
                Bar::Name => (
                    l.name_rect(i),
                    name_figures(
                        info.name(false).as_deref(),
                        info.branch.as_deref(),
                        &familiar.session,
                    ),
                ),
            };
            let width = font::width(&words) as f32 + 2.0 * PAD + 4.0;
            let r = l.tooltip_rect(anchor, width);
            Some((r, words, inside(r.width())))
        });
    let mark = card_now
        .as_ref()
        .and(selected.0)
        .and_then(|e| order.iter().position(|x| *x == e))
        .map(|i| l.focus_mark_rect(i));
    for (mut node, mut vis, is_panel, is_card, is_tooltip) in &mut boxes {
        let rect = if is_panel {
            panel_lines_now.as_ref().map(|(r, ..)| *r)
        } else if is_card {
            card_now.as_ref().map(|(r, _)| *r)
        } else if is_tooltip {
            tooltip.as_ref().map(|(r, ..)| *r)
        } else {
            mark
        };
        if let Some(r) = rect {
            place(&mut node, r);
        }
        show(&mut vis, rect.is_some());
    }
    for (mut text, node, is_panel, is_figures, is_doings) in &mut texts {
        if is_panel {
            if let Some((_, lines, width)) = &panel_lines_now {
                set(&mut text, lines.clone(), *width);
            }
        } else if is_figures || is_doings {
            let Some((_, (figures, doings))) = &card_now else {
                continue;
            };
            let (at, width, lines) = if is_figures { figures } else { doings };
            set(&mut text, lines.clone(), *width);
            if let Some(mut node) = node {
                let (left, top) = (px(at.x), px(at.y));
                if node.left != left || node.top != top {
                    node.left = left;
                    node.top = top;
                }
            }
        } else if let Some((_, words, width)) = &tooltip {
            set(&mut text, words.clone(), *width);
        }
    }
}
