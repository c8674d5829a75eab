/* ABI introspection for foreign-language bindings (python/skinsolve/_abi.py):
 * the size of each public struct a binding mirrors and the offset of each of
 * its fields, so a binding can refuse to run against a library whose structs
 * changed instead of reading garbage. Unknown names give (size_t)-1. */
#include <stddef.h>
#include <string.h>
#include "skinsolve/skinsolve.h"

typedef struct abi_field { const char *strct, *field; size_t offset; } abi_field;
typedef struct abi_struct { const char *name; size_t size; } abi_struct;

#define S(t) {#t, sizeof(t)}
#define F(t, f) {#t, #f, offsetof(t, f)}

static const abi_struct k_structs[] = {
  S(sks_error), S(sks_vec3), S(sks_quat), S(sks_mat4), S(sks_transform),
  S(sks_skeleton), S(sks_skin), S(sks_morph_target), S(sks_mesh_part), S(sks_image), S(sks_texture_ref), S(sks_material), S(sks_model),
  S(sks_track), S(sks_morph_track), S(sks_clip), S(sks_load_options), S(sks_gltf_write_options),
  S(sks_check_options), S(sks_finding), S(sks_findings), S(sks_repair_report),
  S(sks_sampling_job), S(sks_local_to_model_job),
  S(sks_bake_options), S(sks_joint_diagnosis), S(sks_diagnosis), S(sks_baked_clip), S(sks_bake_alignment), S(sks_bake_result), S(sks_report_input),
  S(sks_report_plan),
};

static const abi_field k_fields[] = {
  F(sks_error, code), F(sks_error, message),
  F(sks_transform, translation), F(sks_transform, rotation), F(sks_transform, scale),
  F(sks_skeleton, joint_count), F(sks_skeleton, names), F(sks_skeleton, parents),
  F(sks_skeleton, rest),
  F(sks_skin, name), F(sks_skin, joint_count), F(sks_skin, joints), F(sks_skin, inverse_bind),
  F(sks_mesh_part, name), F(sks_mesh_part, material), F(sks_mesh_part, skin),
  F(sks_mesh_part, node), F(sks_mesh_part, vertex_count), F(sks_mesh_part, positions),
  F(sks_mesh_part, normals), F(sks_mesh_part, uvs), F(sks_mesh_part, influence_count),
  F(sks_mesh_part, joints), F(sks_mesh_part, weights), F(sks_mesh_part, index_count),
  F(sks_mesh_part, indices), F(sks_mesh_part, dropped_influence_vertices),
  F(sks_mesh_part, first_dropped_influence_vertex), F(sks_mesh_part, file_max_influences),
  F(sks_mesh_part, tangents), F(sks_mesh_part, uvs1), F(sks_mesh_part, morph_target_count),
  F(sks_mesh_part, morph_targets),
  F(sks_morph_target, name), F(sks_morph_target, default_weight), F(sks_morph_target, position_deltas),
  F(sks_morph_target, normal_deltas), F(sks_morph_target, tangent_deltas),
  F(sks_image, name), F(sks_image, mime_type), F(sks_image, size), F(sks_image, data),
  F(sks_material, name), F(sks_material, base_color), F(sks_material, metallic),
  F(sks_material, roughness), F(sks_material, double_sided), F(sks_material, emissive),
  F(sks_material, normal_scale), F(sks_material, occlusion_strength), F(sks_material, textures),
  F(sks_material, emissive_strength), F(sks_material, alpha_mode), F(sks_material, alpha_cutoff),
  F(sks_material, extensions), F(sks_material, clearcoat), F(sks_material, clearcoat_roughness),
  F(sks_material, sheen_color), F(sks_material, sheen_roughness), F(sks_material, transmission),
  F(sks_material, thickness), F(sks_material, attenuation_distance), F(sks_material, attenuation_color),
  F(sks_material, ior), F(sks_material, clearcoat_normal_scale),
  F(sks_texture_ref, image), F(sks_texture_ref, tex_coord), F(sks_texture_ref, mag_filter),
  F(sks_texture_ref, min_filter), F(sks_texture_ref, wrap_s), F(sks_texture_ref, wrap_t),
  F(sks_texture_ref, has_transform), F(sks_texture_ref, offset), F(sks_texture_ref, rotation),
  F(sks_texture_ref, scale),
  F(sks_model, source_path), F(sks_model, skeleton), F(sks_model, skin_count),
  F(sks_model, skins), F(sks_model, part_count), F(sks_model, parts),
  F(sks_model, material_count), F(sks_model, materials), F(sks_model, clip_count),
  F(sks_model, clips), F(sks_model, gltf_source), F(sks_model, image_count), F(sks_model, images),
  F(sks_model, warning_count), F(sks_model, warnings),
  F(sks_track, joint), F(sks_track, path), F(sks_track, interpolation),
  F(sks_track, key_count), F(sks_track, times), F(sks_track, values),
  F(sks_morph_track, node), F(sks_morph_track, interpolation), F(sks_morph_track, weight_count),
  F(sks_morph_track, key_count), F(sks_morph_track, times), F(sks_morph_track, values),
  F(sks_clip, name), F(sks_clip, duration), F(sks_clip, track_count), F(sks_clip, tracks),
  F(sks_clip, morph_track_count), F(sks_clip, morph_tracks),
  F(sks_load_options, force_assimp), F(sks_load_options, assimp_in_process),
  F(sks_load_options, max_memory_bytes), F(sks_load_options, timeout_seconds),
  F(sks_load_options, max_resource_bytes), F(sks_load_options, on_file_read),
  F(sks_load_options, on_file_read_user), F(sks_gltf_write_options, embed_normals),
  F(sks_check_options, sum_tolerance), F(sks_check_options, max_influences),
  F(sks_check_options, max_items),
  F(sks_finding, kind), F(sks_finding, severity), F(sks_finding, part),
  F(sks_finding, vertex), F(sks_finding, joint), F(sks_finding, message),
  F(sks_findings, count), F(sks_findings, items), F(sks_findings, total_by_kind),
  F(sks_findings, error_count), F(sks_findings, warning_count),
  F(sks_repair_report, normalized), F(sks_repair_report, negatives_clamped),
  F(sks_repair_report, nans_zeroed), F(sks_repair_report, out_of_range_dropped),
  F(sks_repair_report, zero_weight_vertices), F(sks_repair_report, influences_limited),
  F(sks_sampling_job, clip), F(sks_sampling_job, rest), F(sks_sampling_job, joint_count),
  F(sks_sampling_job, time), F(sks_sampling_job, loop), F(sks_sampling_job, nlerp),
  F(sks_sampling_job, output),
  F(sks_local_to_model_job, parents), F(sks_local_to_model_job, locals),
  F(sks_local_to_model_job, joint_count), F(sks_local_to_model_job, root),
  F(sks_local_to_model_job, models),
  F(sks_bake_options, clip_names), F(sks_bake_options, clip_name_count),
  F(sks_bake_options, mode), F(sks_bake_options, max_constraints), F(sks_bake_options, fps),
  F(sks_bake_options, solver), F(sks_bake_options, correspondence),
  F(sks_bake_options, keep_surfaces), F(sks_bake_options, progress),
  F(sks_bake_options, progress_user), F(sks_bake_options, align),
  F(sks_bake_options, clip_done), F(sks_bake_options, clip_done_user),
  F(sks_bake_options, threads), F(sks_bake_options, max_residual_pct),
  F(sks_baked_clip, name), F(sks_baked_clip, mode), F(sks_baked_clip, frame_count),
  F(sks_baked_clip, times), F(sks_baked_clip, joint_count), F(sks_baked_clip, locals),
  F(sks_baked_clip, quality), F(sks_baked_clip, mean_error_pct),
  F(sks_baked_clip, worst_error_pct), F(sks_baked_clip, solve_ms),
  F(sks_baked_clip, sweeps_per_frame), F(sks_baked_clip, frame_mean_error_pct),
  F(sks_baked_clip, frame_worst_error_pct), F(sks_baked_clip, target_surface),
  F(sks_baked_clip, solved_surface), F(sks_baked_clip, vertex_error),
  F(sks_baked_clip, mean_motion_pct), F(sks_baked_clip, suspect), F(sks_baked_clip, diagnosis),
  F(sks_joint_diagnosis, joint), F(sks_joint_diagnosis, vertex_count), F(sks_joint_diagnosis, share),
  F(sks_joint_diagnosis, mean_error_pct), F(sks_joint_diagnosis, worst_error_pct),
  F(sks_joint_diagnosis, worst_vertex), F(sks_joint_diagnosis, worst_frame),
  F(sks_diagnosis, joint_count), F(sks_diagnosis, joints), F(sks_diagnosis, total_error),
  F(sks_diagnosis, vertex_count), F(sks_diagnosis, unattributed_vertex_count),
  F(sks_diagnosis, unattributed_share),
  F(sks_baked_clip, chunk_count), F(sks_baked_clip, chunks_resolved),
  F(sks_baked_clip, morph_track_count), F(sks_baked_clip, morph_tracks),
  F(sks_baked_clip, rigid_target_surface), F(sks_baked_clip, rigid_solved_surface),
  F(sks_baked_clip, rigid_vertex_error),
  F(sks_baked_clip, bcd_polished_frames), F(sks_baked_clip, bcd_unconverged_frames),
  F(sks_baked_clip, retried_frames),
  F(sks_bake_alignment, identity), F(sks_bake_alignment, applied), F(sks_bake_alignment, scale),
  F(sks_bake_alignment, angle_deg), F(sks_bake_alignment, offset), F(sks_bake_alignment, residual_pct),
  F(sks_bake_alignment, hypotheses), F(sks_bake_alignment, registered),
  F(sks_bake_alignment, similarity_residual_pct), F(sks_bake_alignment, limb_rematched), F(sks_bake_alignment, seconds),
  F(sks_bake_alignment, same_surface), F(sks_bake_alignment, subset),
  F(sks_bake_alignment, finalists), F(sks_bake_alignment, finalist_registration),
  F(sks_bake_alignment, finalist_chosen), F(sks_bake_alignment, trial_quality),
  F(sks_bake_alignment, finalist_registered), F(sks_bake_alignment, finalist_scale),
  F(sks_bake_alignment, finalist_angle_deg), F(sks_bake_alignment, over_default_limit),
  F(sks_bake_alignment, mirrored), F(sks_bake_alignment, label_agreement),
  F(sks_bake_alignment, head_agreement), F(sks_bake_alignment, finalist_label_agreement),
  F(sks_bake_alignment, finalist_head_agreement), F(sks_bake_alignment, up_deg),
  F(sks_bake_alignment, finalist_up_deg), F(sks_bake_alignment, facing_deg),
  F(sks_bake_alignment, finalist_facing_deg), F(sks_bake_alignment, facing_by_knees),
  F(sks_bake_result, clip_count), F(sks_bake_result, clips),
  F(sks_bake_result, constraint_count), F(sks_bake_result, target_vertex_count),
  F(sks_bake_result, target_joint_count), F(sks_bake_result, diagonal),
  F(sks_bake_result, alignment), F(sks_bake_result, correspondence_identity),
  F(sks_bake_result, correspondence_mean_pct), F(sks_bake_result, measured_vertex_count),
  F(sks_bake_result, rigid_vertex_count), F(sks_bake_result, target_weights_normalised),
  F(sks_bake_result, source_weights_normalised),
  F(sks_bake_result, morphs_carried), F(sks_bake_result, morphs_not_carried_count),
  F(sks_bake_result, morphs_not_carried), F(sks_bake_result, morphs_not_carried_pct),
  F(sks_report_input, title), F(sks_report_input, source), F(sks_report_input, target),
  F(sks_report_input, results), F(sks_report_input, result_count), F(sks_report_input, max_bytes),
  F(sks_report_plan, max_bytes), F(sks_report_plan, frame_step), F(sks_report_plan, frames),
  F(sks_report_plan, frames_shown), F(sks_report_plan, vertex_count), F(sks_report_plan, bytes),
  F(sks_report_plan, bytes_all), F(sks_report_plan, vertices_shown), F(sks_report_plan, triangles),
  F(sks_report_plan, triangles_shown), F(sks_report_plan, cell),
};

size_t sks_abi_sizeof(const char *struct_name) {
  if (!struct_name) return (size_t)-1;
  for (size_t i = 0; i < sizeof k_structs / sizeof k_structs[0]; i++)
    if (strcmp(k_structs[i].name, struct_name) == 0) return k_structs[i].size;
  return (size_t)-1;
}

size_t sks_abi_offsetof(const char *struct_name, const char *field) {
  if (!struct_name || !field) return (size_t)-1;
  for (size_t i = 0; i < sizeof k_fields / sizeof k_fields[0]; i++)
    if (strcmp(k_fields[i].strct, struct_name) == 0 && strcmp(k_fields[i].field, field) == 0)
      return k_fields[i].offset;
  return (size_t)-1;
}
