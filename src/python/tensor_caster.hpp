// SPDX-License-Identifier: BSD-3-Clause
// How tensors cross from Python into the C++ API without torch headers: the Python side passes
// each tensor as a tuple (data_ptr, dtype code, shape, strides, device index) — see
// python/coda/_native.py — and None for an absent (empty) view. Plain CPython calls: the
// conversion costs well under a microsecond per tensor.
#pragma once

#include <nanobind/nanobind.h>

#include "coda/tensor.hpp"

namespace nanobind::detail {

template <>
struct type_caster<coda::TensorView> {
  NB_TYPE_CASTER(coda::TensorView, const_name("TensorView"))

  static bool read_dims(PyObject* seq, std::array<std::int64_t, coda::TensorView::kMaxRank>& out,
                        int& rank) {
    if (!PyTuple_Check(seq) && !PyList_Check(seq)) return false;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > coda::TensorView::kMaxRank || (rank >= 0 && n != rank)) return false;
    rank = static_cast<int>(n);
    for (Py_ssize_t i = 0; i < n; ++i) {
      const long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      out[i] = v;
    }
    return true;
  }

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    value = coda::TensorView{};
    if (src.is_none()) return true;
    PyObject* t = src.ptr();
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 5) return false;
    const unsigned long long ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 0));
    const long dtype = PyLong_AsLong(PyTuple_GET_ITEM(t, 1));
    const long device = PyLong_AsLong(PyTuple_GET_ITEM(t, 4));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    if (dtype < 0 || dtype > static_cast<long>(coda::DType::kI64)) return false;
    int rank = -1;
    if (!read_dims(PyTuple_GET_ITEM(t, 2), value.shape, rank)) return false;
    if (!read_dims(PyTuple_GET_ITEM(t, 3), value.stride, rank)) return false;
    value.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr));
    value.dtype = static_cast<coda::DType>(dtype);
    value.rank = rank;
    value.device = static_cast<int>(device);
    return true;
  }

  static handle from_cpp(const coda::TensorView&, rv_policy, cleanup_list*) noexcept {
    return none().release();
  }
};

}  // namespace nanobind::detail
