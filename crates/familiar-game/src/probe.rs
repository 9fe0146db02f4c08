//! Whether the game window can open here, asked before Bevy starts: winit panics when the X
//! server is missing and Bevy's renderer panics when no GPU adapter exists, so the binary
//! ([`crate::window_available`]'s caller) probes both first and stays in the terminal
//! otherwise. The probe asks the same things, the same way: an X11 connection to `DISPLAY`,
//! and a wgpu adapter from the backends Bevy's default `WgpuSettings` would use.

use bevy::math::UVec2;
use bevy::render::settings::WgpuSettings;

use crate::GameError;

/// The GPU adapter the window would render with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renderer {
    /// The driver's adapter name, e.g. `llvmpipe (LLVM 19.1.7, 256 bits)`.
    pub name: String,
    /// The wgpu backend, e.g. `Vulkan`.
    pub backend: String,
    /// A CPU (software) renderer such as Mesa's llvmpipe: works, slowly.
    pub software: bool,
    /// The largest texture side it draws (wgpu's `max_texture_dimension_2d`): a window surface
    /// larger than this makes wgpu panic at the first frame.
    pub max_texture_side: u32,
}

/// What the probe found: the renderer, and the X screen (all its monitors) in pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    pub renderer: Renderer,
    pub screen: Option<UVec2>,
}

impl Probed {
    /// The largest window that can open here: on the screen, and within what the renderer
    /// draws.
    pub fn largest_window(&self) -> UVec2 {
        let side = self.renderer.max_texture_side;
        self.screen
            .unwrap_or(UVec2::splat(side))
            .min(UVec2::splat(side))
    }
}

impl std::fmt::Display for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} via {}", self.name, self.backend)?;
        if self.software {
            f.write_str(" (software: works, slowly)")?;
        }
        Ok(())
    }
}

/// Checks the display (as [`crate::display_available`]), then connects to the X server and
/// asks wgpu for an adapter. Returns the renderer the window would use, and the screen's size.
pub fn window_available() -> Result<Probed, GameError> {
    crate::display_available()?;
    let screen = x_server()?;
    Ok(Probed {
        renderer: gpu_adapter()?,
        screen,
    })
}

/// Connect to the X server `DISPLAY` names, as winit will (x11rb reads the same `DISPLAY`
/// and `XAUTHORITY`), take its screen's size, and hang up.
fn x_server() -> Result<Option<UVec2>, GameError> {
    use x11rb::connection::Connection as _;
    let display = std::env::var("DISPLAY").unwrap_or_default();
    match x11rb::connect(None) {
        Ok((connection, screen)) => Ok(connection.setup().roots.get(screen).map(|root| {
            UVec2::new(
                u32::from(root.width_in_pixels),
                u32::from(root.height_in_pixels),
            )
        })),
        Err(err) => Err(GameError::NoXServer {
            display,
            reason: err.to_string(),
        }),
    }
}

/// Ask wgpu for an adapter with Bevy's defaults (backends from `WGPU_BACKEND` or all those
/// compiled in, the power preference, `WGPU_FORCE_FALLBACK_ADAPTER`). No surface: the window
/// does not exist yet, and on X11 every adapter that exists can present to it.
fn gpu_adapter() -> Result<Renderer, GameError> {
    let settings = WgpuSettings::default();
    let Some(backends) = settings.backends else {
        return Err(GameError::NoGpu);
    };
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        // No debug or validation layers (a debug build's default): the loader would log its
        // complaints as errors, and the probe's answer is all the user needs.
        flags: wgpu::InstanceFlags::empty(),
        memory_budget_thresholds: settings.instance_memory_budget_thresholds,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let force_fallback_adapter = std::env::var("WGPU_FORCE_FALLBACK_ADAPTER")
        .map_or(settings.force_fallback_adapter, |v| {
            !(v.is_empty() || v == "0" || v == "false")
        });
    let adapter = bevy::tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: settings.power_preference,
        compatible_surface: None,
        force_fallback_adapter,
    }))
    .map_err(|err| {
        tracing::debug!("no GPU adapter: {err}");
        GameError::NoGpu
    })?;
    let info = adapter.get_info();
    Ok(Renderer {
        name: info.name,
        backend: format!("{:?}", info.backend),
        software: info.device_type == wgpu::DeviceType::Cpu,
        max_texture_side: adapter.limits().max_texture_dimension_2d,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renderer_says_software_when_it_is() {
        let mut renderer = Renderer {
            name: "llvmpipe".to_string(),
            backend: "Vulkan".to_string(),
            software: true,
            max_texture_side: 16_384,
        };
        assert_eq!(
            renderer.to_string(),
            "llvmpipe via Vulkan (software: works, slowly)"
        );
        renderer.software = false;
        assert_eq!(renderer.to_string(), "llvmpipe via Vulkan");
    }

    #[test]
    fn the_largest_window_is_on_the_screen_and_within_the_largest_texture() {
        let mut probed = Probed {
            renderer: Renderer {
                name: "a GPU".to_string(),
                backend: "Vulkan".to_string(),
                software: false,
                max_texture_side: 8_192,
            },
            screen: Some(UVec2::new(2560, 1440)),
        };
        assert_eq!(probed.largest_window(), UVec2::new(2560, 1440));
        // Three 4K monitors side by side: wider than the GPU draws.
        probed.screen = Some(UVec2::new(11_520, 2160));
        assert_eq!(probed.largest_window(), UVec2::new(8_192, 2160));
        probed.screen = None;
        assert_eq!(probed.largest_window(), UVec2::splat(8_192));
    }
}
