// user_source_now(): the calling thread's Python frames, walked to the first outside the
// library folders. Each code object is judged once and each (code, line) interned once; code
// objects are kept alive so that their addresses stay theirs.
#include "user_frames.h"

#include <Python.h>
#include <frameobject.h>

#include <map>
#include <unordered_map>
#include <utility>

#include "core/pools.h"
#include "eager/module_sites.h"

namespace layoutprof {
namespace {

struct Known {
  std::string folders[2];
  std::unordered_map<PyCodeObject*, bool> users;           // code object → the user's
  // (code, line) → source id, and the module the translator named (ModuleSites::kNoModule: none)
  std::map<std::pair<PyCodeObject*, int>, std::pair<uint32_t, uint32_t>> lines;
  PyObject* translator = nullptr;                           // set_source_translator
  // The pools' epoch the ids were interned in: once it ends they are gone from module_sites(),
  // and the code objects are let go (with the GIL held, by the next probe).
  EpochStamp epoch;

  void forget_if_stale() {
    if (!epoch.ended()) return;
    for (auto& judged : users) Py_DECREF(judged.first);
    users.clear();
    lines.clear();
  }
};

Known& known() {
  static Known* k = new Known;  // used by callbacks until the process ends
  return *k;
}

std::string utf8(PyObject* text) {
  const char* s = text && PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : nullptr;
  return s ? s : "";
}

bool is_users(PyCodeObject* code) {
  auto [it, added] = known().users.emplace(code, true);
  if (added) {
    Py_INCREF(code);
    const std::string file = utf8(code->co_filename);
    for (const std::string& folder : known().folders)
      if (!folder.empty() && file.compare(0, folder.size(), folder) == 0) it->second = false;
  }
  return it->second;
}

std::string line_text(const std::string& file, int line) {
  PyObject* linecache = PyImport_ImportModule("linecache");
  if (!linecache) {
    PyErr_Clear();
    return "";
  }
  PyObject* text = PyObject_CallMethod(linecache, "getline", "si", file.c_str(), line);
  Py_DECREF(linecache);
  std::string out = utf8(text);
  Py_XDECREF(text);
  PyErr_Clear();
  const size_t first = out.find_first_not_of(" \t");
  const size_t last = out.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : out.substr(first, last - first + 1);
}

// The translator's answer for a line of generated code: `file` and `line` replaced, or kept;
// the module it names (ModuleSites::kNoModule: none).
uint32_t translate(std::string& file, int& line) {
  uint32_t module = ModuleSites::kNoModule;
  if (!known().translator) return module;
  PyObject* found = PyObject_CallFunction(known().translator, "si", file.c_str(), line);
  const char* to_file = nullptr;
  const char* path = nullptr;
  int to_line = 0;
  if (found && PyTuple_Check(found) && PyArg_ParseTuple(found, "si|s", &to_file, &to_line, &path)) {
    file = to_file;
    line = to_line;
    if (path && *path) module = module_sites().module_id(path);
  }
  Py_XDECREF(found);
  PyErr_Clear();  // a translator that fails leaves the generated line, never raises into the op
  return module;
}

std::pair<uint32_t, uint32_t> intern(PyCodeObject* code, int line) {
  auto [it, added] = known().lines.emplace(std::make_pair(code, line), std::make_pair(0u, ModuleSites::kNoModule));
  if (added) {
    std::string file = utf8(code->co_filename);
    it->second.second = translate(file, line);
    it->second.first = module_sites().source_id(file + ":" + std::to_string(line), line_text(file, line));
  }
  return it->second;
}

uint32_t users_line(PyFrameObject* frame, uint32_t* nested_module) {
  known().forget_if_stale();
  Py_XINCREF(frame);
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const bool mine = is_users(code);
    if (mine) {
      const auto [id, module] = intern(code, PyFrame_GetLineNumber(frame));
      if (module != ModuleSites::kNoModule) *nested_module = module;
      Py_DECREF(code);
      Py_DECREF(frame);
      return id;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  return 0;
}

}  // namespace

void set_library_folders(const std::string& torch_folder, const std::string& package_folder) {
  known().folders[0] = torch_folder;
  known().folders[1] = package_folder;
}

void set_source_translator(PyObject* translator) {
  Py_XINCREF(translator == Py_None ? nullptr : translator);
  Py_XDECREF(known().translator);
  known().translator = translator == Py_None ? nullptr : translator;
}

uint32_t user_source_now(uint32_t* nested_module) {
#if PY_VERSION_HEX >= 0x030D0000
  if (!Py_IsInitialized() || Py_IsFinalizing()) return 0;
#else
  if (!Py_IsInitialized() || _Py_IsFinalizing()) return 0;
#endif
  // A thread that never ran Python (an intra-op worker of an op the user's thread runs, maybe
  // with the GIL held): no user frame there, and no GIL to wait for.
  if (PyGILState_GetThisThreadState() == nullptr) return 0;
  const PyGILState_STATE gil = PyGILState_Ensure();
  const uint32_t id = users_line(PyEval_GetFrame(), nested_module);
  PyGILState_Release(gil);
  return id;
}

}  // namespace layoutprof
