"""ctypes mirrors of every libskinsolve struct the Python module touches.

ALL mirrors live in this one file. When a C struct changes (include/skinsolve/*.h),
update its mirror here; `verify(lib)` (run at import) compares every mirror's
size and every field's offset with the library's own `sks_abi_sizeof` /
`sks_abi_offsetof` (src/common_abi.c) and raises AbiMismatch naming the first
difference, so a stale mirror never reads garbage.
"""
import ctypes as C

c_size = C.c_size_t
c_float_p = C.POINTER(C.c_float)
c_int32_p = C.POINTER(C.c_int32)
c_uint16_p = C.POINTER(C.c_uint16)
c_uint32_p = C.POINTER(C.c_uint32)
c_enum = C.c_int  # C enums are int-sized on every ABI Debian supports


class AbiMismatch(ImportError):
    """The Python mirrors of libskinsolve's structs do not match the library."""


class sks_error(C.Structure):
    _fields_ = [("code", c_enum), ("message", C.c_char * 1024)]


class sks_vec3(C.Structure):
    _fields_ = [("x", C.c_float), ("y", C.c_float), ("z", C.c_float)]


class sks_quat(C.Structure):
    _fields_ = [("x", C.c_float), ("y", C.c_float), ("z", C.c_float), ("w", C.c_float)]


class sks_mat4(C.Structure):
    _fields_ = [("m", C.c_float * 16)]


class sks_transform(C.Structure):
    _fields_ = [("translation", sks_vec3), ("rotation", sks_quat), ("scale", sks_vec3)]


class sks_skeleton(C.Structure):
    _fields_ = [("joint_count", c_size), ("names", C.POINTER(C.c_char_p)),
                ("parents", c_int32_p), ("rest", C.POINTER(sks_transform))]


class sks_skin(C.Structure):
    _fields_ = [("name", C.c_char_p), ("joint_count", c_size), ("joints", c_int32_p),
                ("inverse_bind", C.POINTER(sks_mat4))]


class sks_morph_target(C.Structure):
    _fields_ = [("name", C.c_char_p), ("default_weight", C.c_float), ("position_deltas", c_float_p),
                ("normal_deltas", c_float_p), ("tangent_deltas", c_float_p)]


class sks_mesh_part(C.Structure):
    _fields_ = [("name", C.c_char_p), ("material", C.c_int32), ("skin", C.c_int32),
                ("node", C.c_int32), ("vertex_count", c_size), ("positions", c_float_p),
                ("normals", c_float_p), ("uvs", c_float_p), ("influence_count", C.c_uint32),
                ("joints", c_uint16_p), ("weights", c_float_p), ("index_count", c_size),
                ("indices", c_uint32_p), ("dropped_influence_vertices", c_size),
                ("first_dropped_influence_vertex", c_size), ("file_max_influences", C.c_uint32),
                ("tangents", c_float_p), ("uvs1", c_float_p), ("morph_target_count", c_size),
                ("morph_targets", C.POINTER(sks_morph_target))]


class sks_image(C.Structure):
    _fields_ = [("name", C.c_char_p), ("mime_type", C.c_char_p), ("size", c_size),
                ("data", C.POINTER(C.c_uint8))]


class sks_texture_ref(C.Structure):
    _fields_ = [("image", C.c_int32), ("tex_coord", C.c_int32), ("mag_filter", C.c_int32),
                ("min_filter", C.c_int32), ("wrap_s", C.c_int32), ("wrap_t", C.c_int32),
                ("has_transform", C.c_int32), ("offset", C.c_float * 2), ("rotation", C.c_float),
                ("scale", C.c_float * 2)]


SKS_TEXTURE_BASE_COLOR, SKS_TEXTURE_METALLIC_ROUGHNESS, SKS_TEXTURE_NORMAL, SKS_TEXTURE_OCCLUSION, \
    SKS_TEXTURE_EMISSIVE, SKS_TEXTURE_CLEARCOAT, SKS_TEXTURE_CLEARCOAT_ROUGHNESS, SKS_TEXTURE_CLEARCOAT_NORMAL, \
    SKS_TEXTURE_SHEEN_COLOR, SKS_TEXTURE_SHEEN_ROUGHNESS, SKS_TEXTURE_TRANSMISSION, SKS_TEXTURE_THICKNESS, \
    SKS_TEXTURE_SLOT_COUNT = range(13)


class sks_material(C.Structure):
    _fields_ = [("name", C.c_char_p), ("base_color", C.c_float * 4), ("metallic", C.c_float),
                ("roughness", C.c_float), ("double_sided", C.c_int32),
                ("emissive", C.c_float * 3), ("normal_scale", C.c_float),
                ("occlusion_strength", C.c_float),
                ("textures", sks_texture_ref * SKS_TEXTURE_SLOT_COUNT), ("emissive_strength", C.c_float),
                ("alpha_mode", C.c_int32), ("alpha_cutoff", C.c_float), ("extensions", C.c_uint32),
                ("clearcoat", C.c_float), ("clearcoat_roughness", C.c_float),
                ("sheen_color", C.c_float * 3), ("sheen_roughness", C.c_float),
                ("transmission", C.c_float), ("thickness", C.c_float),
                ("attenuation_distance", C.c_float), ("attenuation_color", C.c_float * 3),
                ("ior", C.c_float), ("clearcoat_normal_scale", C.c_float)]


class sks_track(C.Structure):
    _fields_ = [("joint", C.c_int32), ("path", c_enum), ("interpolation", c_enum),
                ("key_count", c_size), ("times", c_float_p), ("values", c_float_p)]


class sks_morph_track(C.Structure):
    _fields_ = [("node", C.c_int32), ("interpolation", c_enum), ("weight_count", c_size),
                ("key_count", c_size), ("times", c_float_p), ("values", c_float_p)]


class sks_clip(C.Structure):
    _fields_ = [("name", C.c_char_p), ("duration", C.c_float), ("track_count", c_size),
                ("tracks", C.POINTER(sks_track)), ("morph_track_count", c_size),
                ("morph_tracks", C.POINTER(sks_morph_track))]


class sks_model(C.Structure):
    _fields_ = [("source_path", C.c_char_p), ("skeleton", sks_skeleton),
                ("skin_count", c_size), ("skins", C.POINTER(sks_skin)),
                ("part_count", c_size), ("parts", C.POINTER(sks_mesh_part)),
                ("material_count", c_size), ("materials", C.POINTER(sks_material)),
                ("image_count", c_size), ("images", C.POINTER(sks_image)),
                ("clip_count", c_size), ("clips", C.POINTER(sks_clip)),
                ("gltf_source", C.c_void_p),  # opaque: the glTF document kept for lossless writes
                ("warning_count", c_size), ("warnings", C.POINTER(C.c_char_p))]


class sks_load_options(C.Structure):
    _fields_ = [("force_assimp", C.c_int), ("assimp_in_process", C.c_int),
                ("max_memory_bytes", C.c_uint64), ("timeout_seconds", C.c_double),
                ("max_resource_bytes", C.c_uint64),
                ("on_file_read", C.c_void_p), ("on_file_read_user", C.c_void_p)]


class sks_gltf_write_options(C.Structure):
    _fields_ = [("embed_normals", C.c_int)]


class sks_check_options(C.Structure):
    _fields_ = [("sum_tolerance", C.c_float), ("max_influences", C.c_uint32),
                ("max_items", c_size)]


class sks_finding(C.Structure):
    _fields_ = [("kind", c_enum), ("severity", c_enum), ("part", C.c_int32),
                ("vertex", C.c_int64), ("joint", C.c_int32), ("message", C.c_char * 256)]


class sks_findings(C.Structure):
    _fields_ = [("count", c_size), ("items", C.POINTER(sks_finding)),
                ("total_by_kind", c_size * 16), ("error_count", c_size),
                ("warning_count", c_size)]


class sks_repair_report(C.Structure):
    _fields_ = [("normalized", c_size), ("negatives_clamped", c_size), ("nans_zeroed", c_size),
                ("out_of_range_dropped", c_size), ("zero_weight_vertices", c_size),
                ("influences_limited", c_size)]


class sks_sampling_job(C.Structure):
    _fields_ = [("clip", C.POINTER(sks_clip)), ("rest", C.POINTER(sks_transform)),
                ("joint_count", c_size), ("time", C.c_float), ("loop", C.c_int),
                ("nlerp", C.c_int), ("output", C.POINTER(sks_transform))]


class sks_local_to_model_job(C.Structure):
    _fields_ = [("parents", c_int32_p), ("locals", C.POINTER(sks_transform)),
                ("joint_count", c_size), ("root", C.POINTER(sks_mat4)),
                ("models", C.POINTER(sks_mat4))]


# void (*)(void *user, const char *clip, size_t frame, size_t frame_count)
sks_progress_fn = C.CFUNCTYPE(None, C.c_void_p, C.c_char_p, c_size, c_size)


class sks_bake_options(C.Structure):
    _fields_ = [("clip_names", C.POINTER(C.c_char_p)), ("clip_name_count", c_size),
                ("mode", c_enum), ("max_constraints", c_size), ("fps", C.c_float),
                ("solver", c_enum), ("correspondence", c_enum), ("keep_surfaces", C.c_int),
                ("progress", sks_progress_fn), ("progress_user", C.c_void_p),
                ("align", c_enum),
                ("clip_done", C.c_void_p), ("clip_done_user", C.c_void_p),
                ("threads", C.c_uint), ("max_residual_pct", C.c_double)]


class sks_joint_diagnosis(C.Structure):
    _fields_ = [("joint", C.c_int32), ("vertex_count", c_size), ("share", C.c_double),
                ("mean_error_pct", C.c_double), ("worst_error_pct", C.c_double),
                ("worst_vertex", c_size), ("worst_frame", c_size)]


class sks_diagnosis(C.Structure):
    _fields_ = [("joint_count", c_size), ("joints", C.POINTER(sks_joint_diagnosis)),
                ("total_error", C.c_double), ("vertex_count", c_size),
                ("unattributed_vertex_count", c_size), ("unattributed_share", C.c_double)]


class sks_baked_clip(C.Structure):
    _fields_ = [("name", C.c_char_p), ("mode", c_enum), ("frame_count", c_size),
                ("times", c_float_p), ("joint_count", c_size),
                ("locals", C.POINTER(sks_transform)), ("quality", C.c_double),
                ("mean_error_pct", C.c_double), ("worst_error_pct", C.c_double),
                ("solve_ms", C.c_double), ("sweeps_per_frame", C.c_double),
                ("frame_mean_error_pct", c_float_p), ("frame_worst_error_pct", c_float_p),
                ("target_surface", c_float_p), ("solved_surface", c_float_p),
                ("vertex_error", c_float_p), ("mean_motion_pct", C.c_double),
                ("suspect", C.c_int), ("diagnosis", sks_diagnosis), ("chunk_count", c_size), ("chunks_resolved", c_size),
                ("morph_track_count", c_size), ("morph_tracks", C.POINTER(sks_morph_track)),
                ("rigid_target_surface", c_float_p), ("rigid_solved_surface", c_float_p),
                ("rigid_vertex_error", c_float_p),
                ("bcd_polished_frames", c_size), ("bcd_unconverged_frames", c_size),
                ("retried_frames", c_size)]


class sks_bake_alignment(C.Structure):
    _fields_ = [("identity", C.c_int), ("applied", C.c_int), ("scale", C.c_double),
                ("angle_deg", C.c_double), ("offset", C.c_double * 3),
                ("residual_pct", C.c_double), ("hypotheses", c_size),
                ("registered", C.c_int), ("similarity_residual_pct", C.c_double),
                ("limb_rematched", C.c_size_t),
                ("seconds", C.c_double), ("same_surface", C.c_int),
                ("subset", C.c_int), ("finalists", c_size), ("finalist_registration", c_size),
                ("finalist_chosen", c_size), ("trial_quality", C.c_double * 4),
                ("finalist_registered", C.c_int * 4), ("finalist_scale", C.c_double * 4),
                ("finalist_angle_deg", C.c_double * 4), ("over_default_limit", C.c_int),
                ("mirrored", C.c_int), ("label_agreement", C.c_double), ("head_agreement", C.c_double),
                ("finalist_label_agreement", C.c_double * 4), ("finalist_head_agreement", C.c_double * 4),
                ("up_deg", C.c_double), ("finalist_up_deg", C.c_double * 4),
                ("facing_deg", C.c_double), ("finalist_facing_deg", C.c_double * 4),
                ("facing_by_knees", C.c_int)]


class sks_bake_result(C.Structure):
    _fields_ = [("clip_count", c_size), ("clips", C.POINTER(sks_baked_clip)),
                ("constraint_count", c_size), ("target_vertex_count", c_size),
                ("target_joint_count", c_size), ("diagonal", C.c_double),
                ("alignment", sks_bake_alignment), ("correspondence_identity", C.c_int),
                ("correspondence_mean_pct", C.c_double), ("measured_vertex_count", c_size),
                ("rigid_vertex_count", c_size), ("target_weights_normalised", c_size),
                ("source_weights_normalised", c_size), ("morphs_carried", c_size),
                ("morphs_not_carried_count", c_size), ("morphs_not_carried", C.POINTER(C.c_char_p)),
                ("morphs_not_carried_pct", C.c_double)]


class sks_report_input(C.Structure):
    _fields_ = [("title", C.c_char_p), ("source", C.POINTER(sks_model)),
                ("target", C.POINTER(sks_model)),
                ("results", C.POINTER(C.POINTER(sks_bake_result))), ("result_count", c_size),
                ("max_bytes", c_size)]


class sks_report_plan(C.Structure):
    _fields_ = [("max_bytes", c_size), ("frame_step", c_size), ("frames", c_size),
                ("frames_shown", c_size), ("vertex_count", c_size), ("bytes", c_size),
                ("bytes_all", c_size), ("vertices_shown", c_size), ("triangles", c_size),
                ("triangles_shown", c_size), ("cell", C.c_double)]


MIRRORS = [sks_error, sks_vec3, sks_quat, sks_mat4, sks_transform, sks_skeleton, sks_skin,
           sks_morph_target, sks_mesh_part, sks_image, sks_texture_ref, sks_material, sks_model, sks_track, sks_morph_track, sks_clip, sks_load_options,
           sks_gltf_write_options, sks_check_options, sks_finding, sks_findings,
           sks_repair_report, sks_sampling_job, sks_local_to_model_job, sks_bake_options,
           sks_joint_diagnosis, sks_diagnosis, sks_baked_clip, sks_bake_alignment, sks_bake_result, sks_report_input,
           sks_report_plan]

# Structs whose fields the library reports (value types sks_vec3/quat/mat4 are
# checked by size only).
_SIZE_ONLY = {"sks_vec3", "sks_quat", "sks_mat4"}
_UNKNOWN = C.c_size_t(-1).value


def mismatches(lib):
    """Every difference between these mirrors and the loaded library, as text."""
    lib.sks_abi_sizeof.restype = C.c_size_t
    lib.sks_abi_sizeof.argtypes = [C.c_char_p]
    lib.sks_abi_offsetof.restype = C.c_size_t
    lib.sks_abi_offsetof.argtypes = [C.c_char_p, C.c_char_p]
    out = []
    for m in MIRRORS:
        name = m.__name__
        size = lib.sks_abi_sizeof(name.encode())
        if size == _UNKNOWN:
            out.append(f"{name}: unknown to the library")
            continue
        if size != C.sizeof(m):
            out.append(f"{name}: library size {size}, Python mirror {C.sizeof(m)}")
        if name in _SIZE_ONLY:
            continue
        for fname, _ in m._fields_:
            off = lib.sks_abi_offsetof(name.encode(), fname.encode())
            mine = getattr(m, fname).offset
            if off == _UNKNOWN:
                out.append(f"{name}.{fname}: field unknown to the library")
            elif off != mine:
                out.append(f"{name}.{fname}: library offset {off}, Python mirror {mine}")
    return out


def verify(lib, path="libskinsolve"):
    bad = mismatches(lib)
    if bad:
        raise AbiMismatch(f"{path}: struct layout differs from python/skinsolve/_abi.py "
                          f"({len(bad)} difference(s)); first: {bad[0]}. Update the mirrors "
                          f"in _abi.py to match include/skinsolve/*.h.")
