"""Finds and loads libskinsolve.so, declares the C prototypes, checks the ABI."""
import ctypes as C
import os

from . import _abi as A

try:  # written by `cmake --install` (absolute path of the installed library)
    from ._install_paths import LIBRARY as _INSTALLED_LIBRARY, CLI as _INSTALLED_CLI
except ImportError:  # in-tree use with PYTHONPATH=python
    _INSTALLED_LIBRARY = None
    _INSTALLED_CLI = None


def _candidates():
    env = os.environ.get("SKINSOLVE_LIBRARY")
    if env:
        return [env]  # explicit choice: no fallback hides a wrong path
    out = []
    if _INSTALLED_LIBRARY:
        out.append(_INSTALLED_LIBRARY)
    out += ["libskinsolve.so.0", "libskinsolve.so"]
    return out


def _load():
    errors = []
    for path in _candidates():
        try:
            return C.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("skinsolve: cannot load libskinsolve (set SKINSOLVE_LIBRARY to the "
                      "path of libskinsolve.so, or `cmake --install` the project): "
                      + "; ".join(errors))


lib, library_path = _load()
A.verify(lib, library_path)
libc = C.CDLL(None)  # the process's malloc/free: models built in Python are freed by the library

_P = C.POINTER
_err = _P(A.sks_error)
_model = _P(A.sks_model)


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_proto("sks_result_string", C.c_char_p, C.c_int)
_proto("sks_load", C.c_int, C.c_char_p, _P(A.sks_load_options), _model, _err)
_proto("sks_model_free", None, _model)
_proto("sks_model_clone", C.c_int, _model, _model, _err)
_proto("sks_model_vertex_count", C.c_size_t, _model)
_proto("sks_model_total_vertex_count", C.c_size_t, _model)
_proto("sks_model_bind_diagonal", C.c_double, _model)
_proto("sks_bake_diagonal", C.c_double, _model)
_proto("sks_skeleton_find", C.c_int32, _P(A.sks_skeleton), C.c_char_p)
_proto("sks_clip_key_times", C.c_int, _P(A.sks_clip), _P(_P(C.c_float)),
       _P(C.c_size_t), _err)
_proto("sks_check", C.c_int, _model, _P(A.sks_check_options), _P(A.sks_findings), _err)
_proto("sks_findings_free", None, _P(A.sks_findings))
_proto("sks_finding_kind_name", C.c_char_p, C.c_int)
_proto("sks_repair", C.c_int, _model, _P(A.sks_repair_report), _err)
_proto("sks_limit_influences", C.c_int, _model, C.c_uint32, _err)
_proto("sks_sampling_job_run", C.c_int, _P(A.sks_sampling_job))
_proto("sks_local_to_model_job_run", C.c_int, _P(A.sks_local_to_model_job))
_proto("sks_bind_pose_job_run", C.c_int, C.c_void_p)
_proto("sks_skin_model", C.c_int, _model, _P(A.sks_mat4), C.c_int, _P(C.c_float),
       _P(C.c_float), _err)
_proto("sks_write_glb", C.c_int, C.c_char_p, _model, _P(A.sks_gltf_write_options), _err)
_proto("sks_bake", C.c_int, _model, _model, _P(A.sks_bake_options), _P(A.sks_bake_result), _err)
_proto("sks_bake_result_free", None, _P(A.sks_bake_result))
_proto("sks_bake_facing_by", C.c_char_p, _P(A.sks_bake_alignment))
_proto("sks_report_write_html", C.c_int, C.c_char_p, _P(A.sks_report_input), _err)
_proto("sks_bake_apply", C.c_int, _model, _P(A.sks_bake_result), _model, _err)

libc.malloc.restype = C.c_void_p
libc.malloc.argtypes = [C.c_size_t]
libc.calloc.restype = C.c_void_p
libc.calloc.argtypes = [C.c_size_t, C.c_size_t]
libc.free.restype = None
libc.free.argtypes = [C.c_void_p]


def cli_path():
    """The `skinsolve` executable: $SKINSOLVE_CLI, the installed one, one beside the
    library (a build folder), or `skinsolve` on PATH."""
    env = os.environ.get("SKINSOLVE_CLI")
    if env:
        return env
    if _INSTALLED_CLI and os.path.exists(_INSTALLED_CLI):
        return _INSTALLED_CLI
    try:  # the folder of the library actually loaded
        d = os.path.dirname(os.path.realpath(_dl_path()))
        for cand in (os.path.join(d, "skinsolve"), os.path.join(d, "..", "bin", "skinsolve")):
            if os.path.isfile(cand) and os.access(cand, os.X_OK):
                return os.path.normpath(cand)
    except OSError:
        pass
    return "skinsolve"


def _dl_path():
    """Filesystem path of the loaded libskinsolve (via /proc/self/maps)."""
    with open("/proc/self/maps") as f:
        for line in f:
            if "libskinsolve" in line and "/" in line:
                return line[line.index("/"):].strip()
    raise OSError("libskinsolve not found in /proc/self/maps")
