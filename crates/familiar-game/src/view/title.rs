//! The window's title names what it shows: the project of its one session (`app — Familiar`),
//! two projects by name, or how many (`3 projects — Familiar`), so two windows on a desktop
//! (or in a task bar) are told apart. Part of `view`.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::Options;
use crate::logic::SessionInfo;

/// The title for a window called `base` (`Familiar`, `Familiar: demo`) showing the sessions
/// of `projects` (one entry per session; repeats are one project).
pub fn window_title<'a>(base: &str, projects: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = projects.into_iter().collect();
    names.sort_unstable();
    names.dedup();
    match names.as_slice() {
        [] => base.to_owned(),
        [one] => format!("{one} — {base}"),
        [a, b] => format!("{a}, {b} — {base}"),
        many => format!("{} projects — {base}", many.len()),
    }
}

/// Names the window after its sessions' projects whenever they change (a session came,
/// went, or told its project), not every frame.
pub fn name_window(
    options: Res<Options>,
    sessions: Query<Ref<SessionInfo>>,
    mut seen: Local<Option<usize>>,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
) {
    let count = sessions.iter().count();
    if *seen == Some(count) && !sessions.iter().any(|info| info.is_changed()) {
        return;
    }
    *seen = Some(count);
    let Ok(mut window) = windows.single_mut() else {
        return;
    };
    let infos: Vec<Ref<SessionInfo>> = sessions.iter().collect();
    let title = window_title(
        &options.0.title,
        infos.iter().filter_map(|info| info.project.as_deref()),
    );
    if window.title != title {
        window.title = title;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_names_the_project_or_how_many() {
        assert_eq!(window_title("Familiar", []), "Familiar");
        assert_eq!(window_title("Familiar", ["app", "app"]), "app — Familiar");
        assert_eq!(
            window_title("Familiar: demo", ["lib", "app"]),
            "app, lib — Familiar: demo"
        );
        assert_eq!(
            window_title("Familiar", ["a", "b", "c", "a"]),
            "3 projects — Familiar"
        );
    }
}
