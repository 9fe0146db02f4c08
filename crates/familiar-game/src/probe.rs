//! Whether the game window can open here, asked before Bevy starts: winit panics when the X
//! server is missing and Bevy's renderer panics when no GPU adapter exists, so the binary
//! ([`crate::window_available`]'s caller) probes both first and stays in the terminal
//! otherwise. The probe asks the same things, the same way: an X11 connection to `DISPLAY`,
//! and a wgpu adapter from the backends Bevy's default `WgpuSettings` would use.

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
/// asks wgpu for an adapter. Returns the renderer the window would use.
pub fn window_available() -> Result<Renderer, GameError> {
    crate::display_available()?;
    x_server()?;
    gpu_adapter()
}

/// Connect to the X server `DISPLAY` names, as winit will (x11rb reads the same `DISPLAY`
/// and `XAUTHORITY`), and hang up.
fn x_server() -> Result<(), GameError> {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    match x11rb::connect(None) {
        Ok(_) => Ok(()),
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
        };
        assert_eq!(
            renderer.to_string(),
            "llvmpipe via Vulkan (software: works, slowly)"
        );
        renderer.software = false;
        assert_eq!(renderer.to_string(), "llvmpipe via Vulkan");
    }
}
