//! The canvas onto the window in one render pass: the window's camera has no 2D passes of its
//! own (its render graph is [`CanvasToWindow`], this pass alone), which clears the window to
//! the bars' colour and copies the canvas image (`canvas::Canvas`) into the rectangle `canvas`
//! computes, with Bevy's nearest-sampling blit. Under a software renderer (Mesa llvmpipe) the
//! window's pixels are most of a frame's cost: a `Camera2d` showing the canvas as a sprite
//! cleared its own window-sized textures, drew a blended window-sized sprite and copied the
//! result to the window.

use bevy::camera::visibility::RenderLayers;
use bevy::core_pipeline::blit::{BlitPipeline, BlitPipelineKey};
use bevy::ecs::schedule::ScheduleLabel;
use bevy::prelude::*;
use bevy::render::camera::{CameraRenderGraph, ExtractedCamera};
use bevy::render::extract_component::{ExtractComponent, ExtractComponentPlugin};
use bevy::render::extract_resource::ExtractResourcePlugin;
use bevy::render::render_asset::RenderAssets;
use bevy::render::render_resource::{
    BindGroup, CachedRenderPipelineId, PipelineCache, RenderPassDescriptor,
    SpecializedRenderPipelines, TextureFormat, TextureViewId,
};
use bevy::render::renderer::{RenderContext, ViewQuery};
use bevy::render::texture::GpuImage;
use bevy::render::view::ViewTarget;
use bevy::render::{Render, RenderApp, RenderSystems};

use super::canvas::{BARS, Canvas, canvas_for, canvas_origin, canvas_scale};

/// Marks the window's camera: its view gets the canvas.
#[derive(Component, Clone, Copy, Default, ExtractComponent)]
pub(crate) struct WindowBlit;

/// The window camera's whole render graph: the blit.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash, Default)]
struct CanvasToWindow;

/// The window's camera: no 2D passes, only the canvas's copy. It sees only the render layer
/// `layer`, where nothing is drawn, so finding what it sees costs nothing either.
pub(crate) fn window_camera(layer: usize) -> impl Bundle {
    (
        Camera {
            order: 0,
            ..default()
        },
        CameraRenderGraph::new(CanvasToWindow),
        // Bevy sizes a camera's target only for cameras with a projection.
        Projection::Orthographic(OrthographicProjection::default_2d()),
        Msaa::Off,
        RenderLayers::layer(layer),
        WindowBlit,
    )
}

/// The blit pipeline for the window's texture format.
#[derive(Component)]
struct CanvasBlitPipeline(CachedRenderPipelineId, TextureFormat);

pub(crate) struct CanvasBlitPlugin;

impl Plugin for CanvasBlitPlugin {
    fn build(&self, app: &mut App) {
        app.add_plugins((
            ExtractComponentPlugin::<WindowBlit>::default(),
            ExtractResourcePlugin::<Canvas>::default(),
        ));
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .add_schedule(Schedule::new(CanvasToWindow))
            .add_systems(Render, prepare_pipeline.in_set(RenderSystems::Prepare))
            .add_systems(CanvasToWindow, blit_canvas);
    }
}

fn prepare_pipeline(
    mut commands: Commands,
    mut cache: ResMut<PipelineCache>,
    mut pipelines: ResMut<SpecializedRenderPipelines<BlitPipeline>>,
    blit: Res<BlitPipeline>,
    views: Query<(Entity, &ViewTarget, Option<&CanvasBlitPipeline>), With<WindowBlit>>,
) {
    for (entity, target, prepared) in &views {
        let Some(format) = target.out_texture_view_format() else {
            continue;
        };
        if prepared.is_some_and(|p| p.1 == format) {
            continue;
        }
        let key = BlitPipelineKey {
            target_format: format,
            blend_state: None,
            samples: 1,
            // The canvas is an sRGB texture: sampled, it is linear already.
            source_space: None,
        };
        let id = pipelines.specialize(&cache, &blit, key);
        // Compiled now, so no frame shows the window without its canvas.
        cache.block_on_render_pipeline(id);
        commands
            .entity(entity)
            .insert(CanvasBlitPipeline(id, format));
    }
}

#[allow(clippy::too_many_arguments)]
fn blit_canvas(
    view: ViewQuery<(&ViewTarget, &ExtractedCamera, &CanvasBlitPipeline), With<WindowBlit>>,
    canvas: Option<Res<Canvas>>,
    images: Res<RenderAssets<GpuImage>>,
    cache: Res<PipelineCache>,
    blit: Res<BlitPipeline>,
    mut bind_group: Local<Option<(TextureViewId, BindGroup)>>,
    mut ctx: RenderContext,
) {
    let (target, camera, pipeline) = view.into_inner();
    let Some(pipeline) = cache.get_render_pipeline(pipeline.0) else {
        return;
    };
    let Some(image) = canvas.and_then(|c| images.get(&c.image)) else {
        return;
    };
    let Some(window) = camera.physical_target_size.filter(|s| s.x > 0 && s.y > 0) else {
        return;
    };
    let group = match &*bind_group {
        Some((id, group)) if *id == image.texture_view.id() => group.clone(),
        _ => {
            let group = blit.create_bind_group(ctx.render_device(), &image.texture_view, &cache);
            *bind_group = Some((image.texture_view.id(), group.clone()));
            group
        }
    };
    let bars = Color::srgb_u8(BARS[0], BARS[1], BARS[2]).to_linear();
    let Some(attachment) = target.out_texture_color_attachment(Some(bars)) else {
        return;
    };
    let window = window.as_vec2();
    let origin = canvas_origin(window);
    let size = (canvas_for(window) * canvas_scale(window)).as_vec2();
    let mut pass = ctx
        .command_encoder()
        .begin_render_pass(&RenderPassDescriptor {
            label: Some("familiar_canvas_blit"),
            color_attachments: &[Some(attachment)],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
    // A window smaller than the canvas shows its middle: the viewport may start off-screen.
    pass.set_viewport(origin.x, origin.y, size.x, size.y, 0.0, 1.0);
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, &group, &[]);
    pass.draw(0..3, 0..1);
}
