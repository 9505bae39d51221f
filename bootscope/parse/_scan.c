/* The block scan's two hottest loops in C (bootscope/parse/chunked.py, initcall_rows.py).
 *
 * codes(text) -> bytes: one byte per character of a str, as chunked._codes defines it (a Latin-1
 *     character is its own code, any other character 0x80).
 * initcall_rows(padded, starts, ends, out) -> None: the fields of initcall_debug lines, as
 *     initcall_rows._numpy_fields reads them, written into ``out`` (int64, OUT_COLUMNS x rows).
 * fixed_stamps(padded, starts, fixed, stamp_us) -> None: which lines start with printk's
 *     fixed-width stamp and its value in us, as chunked._numpy_fixed_stamps reads them.
 * starts_with(padded, at, literals, out) -> None: out[i] = 1 where padded[at[i]:] starts with one
 *     of ``literals`` (bytes).
 *
 * Both take and fill buffers (bytes, numpy arrays) through the buffer protocol: no numpy headers.
 * The pure-numpy code does the same when this module is not built; tests/parse/test_native_scan.py
 * checks that both give the same results.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* out's rows, in this order (initcall_rows.py names them the same) */
enum { OK, IS_CALL, TOKEN_END, PID_AT, RET_AT, RET_END, USECS, FAILING, GROUP, OUT_COLUMNS };

#define MAX_DIGITS 18 /* int64 holds any 18-digit number; longer ones are the regex's */
#define NAME_AT 9     /* len("calling  ") == len("initcall ") */

static PyObject *codes(PyObject *self, PyObject *text) {
    (void)self;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "codes() takes a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL) return NULL;
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        memcpy(o, data, (size_t)n);
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *s = (const Py_UCS2 *)data;
        for (Py_ssize_t i = 0; i < n; i++) o[i] = s[i] < 256 ? (unsigned char)s[i] : 0x80;
    } else {
        const Py_UCS4 *s = (const Py_UCS4 *)data;
        for (Py_ssize_t i = 0; i < n; i++) o[i] = s[i] < 256 ? (unsigned char)s[i] : 0x80;
    }
    return out;
}

typedef struct {
    const unsigned char *c;
    Py_ssize_t len;
} Codes;

/* the code at i; 0 outside the buffer (numpy's probes read the padding's zeros there) */
static inline unsigned char at(const Codes *t, int64_t i) { return i >= 0 && i < t->len ? t->c[i] : 0; }

static int literal(const Codes *t, int64_t i, const char *lit) {
    for (int64_t k = 0; lit[k]; k++)
        if (at(t, i + k) != (unsigned char)lit[k]) return 0;
    return 1;
}

/* The run of ASCII digits that ends at ``end``: its start, its value; 1 if it is 1-18 digits long. */
static int digits_before(const Codes *t, int64_t end, int64_t *start, int64_t *value) {
    int64_t length = 0, v = 0, place = 1;
    while (length <= MAX_DIGITS) {
        unsigned char ch = at(t, end - length - 1);
        if (ch < '0' || ch > '9') break;
        if (length < MAX_DIGITS) v += (int64_t)(ch - '0') * place;
        place = length < MAX_DIGITS - 1 ? place * 10 : place;
        length++;
    }
    *start = end - length;
    *value = v;
    return length > 0 && length <= MAX_DIGITS;
}

static uint64_t hash_bytes(const unsigned char *p, int64_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (int64_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static int get_buffer(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t item, const char *what) {
    if (PyObject_GetBuffer(obj, view, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != item) {
        PyErr_Format(PyExc_TypeError, "%s: items of %zd bytes expected", what, item);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

typedef struct {
    PyObject *obj;
    int writable;
    Py_ssize_t item;
    const char *what;
} BufferSpec;

static void release_buffers(Py_buffer *views, int count) {
    for (int i = count - 1; i >= 0; i--) PyBuffer_Release(&views[i]);
}

/* Acquire one view per spec, in order; on a failure release those acquired and return -1. */
static int get_buffers(const BufferSpec *specs, Py_buffer *views, int count) {
    for (int i = 0; i < count; i++) {
        if (get_buffer(specs[i].obj, &views[i], specs[i].writable, specs[i].item, specs[i].what) < 0) {
            release_buffers(views, i);
            return -1;
        }
    }
    return 0;
}

static PyObject *initcall_rows(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *padded_obj, *starts_obj, *ends_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &padded_obj, &starts_obj, &ends_obj, &out_obj)) return NULL;
    const BufferSpec specs[] = {
        {padded_obj, 0, 1, "padded"}, {starts_obj, 0, 8, "starts"}, {ends_obj, 0, 8, "ends"}, {out_obj, 1, 8, "out"}};
    Py_buffer views[4];
    if (get_buffers(specs, views, 4) < 0) return NULL;
    Py_ssize_t n = views[1].len / 8;
    if (views[2].len / 8 != n || views[3].len / 8 != (Py_ssize_t)OUT_COLUMNS * n) {
        PyErr_SetString(PyExc_ValueError, "initcall_rows: starts, ends and out do not agree in length");
        release_buffers(views, 4);
        return NULL;
    }
    Codes t = {(const unsigned char *)views[0].buf, views[0].len};
    const int64_t *starts = (const int64_t *)views[1].buf, *ends = (const int64_t *)views[2].buf;
    int64_t *out = (int64_t *)views[3].buf;
    /* open addressing over the rows' name tokens: slot -> 1 + the first row of that token */
    Py_ssize_t size = 16;
    while (size < 2 * n) size *= 2;
    int64_t *slots = calloc((size_t)size, sizeof(int64_t));
    if (slots == NULL) {
        release_buffers(views, 4);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < n; r++) {
        int64_t start = starts[r], end = ends[r];
        int call = at(&t, start) == 'c';
        int ok = literal(&t, start, call ? "calling  " : "initcall ");
        int64_t token_end = 0, pid_at = 0, ret_at = 0, ret_end = 0, usecs = 0, failing = 0;
        if (ok && call) {
            int64_t pid = 0;
            ok = digits_before(&t, end, &pid_at, &pid) && literal(&t, pid_at - 3, " @ ");
            token_end = pid_at - 3;
        } else if (ok) {
            int64_t usecs_end = end - 6, usecs_at = 0, ret_digits_at = 0, ret_value = 0;
            int usecs_ok = digits_before(&t, usecs_end, &usecs_at, &usecs);
            ret_end = usecs_at - 7;
            int ret_ok = digits_before(&t, ret_end, &ret_digits_at, &ret_value);
            ret_at = ret_digits_at - (at(&t, ret_digits_at - 1) == '-');
            ok = literal(&t, usecs_end, " usecs") && usecs_ok && literal(&t, ret_end, " after ") && ret_ok &&
                 literal(&t, ret_at - 10, " returned ");
            token_end = ret_at - 10;
            failing = ret_value != 0;
        }
        int64_t name_at = start + NAME_AT;
        ok = ok && token_end > name_at && token_end <= t.len;
        int64_t group = -1;
        if (ok) {
            const unsigned char *token = t.c + name_at;
            int64_t length = token_end - name_at;
            Py_ssize_t slot = (Py_ssize_t)(hash_bytes(token, length) & (uint64_t)(size - 1));
            for (;;) {
                int64_t held = slots[slot];
                if (held == 0) {
                    slots[slot] = (int64_t)r + 1;
                    group = r;
                    break;
                }
                int64_t other = held - 1;
                int64_t other_at = starts[other] + NAME_AT;
                /* a row in the table is ok, so its token end is in out already */
                if (out[TOKEN_END * n + other] - other_at == length && memcmp(t.c + other_at, token, (size_t)length) == 0) {
                    group = other;
                    break;
                }
                slot = (slot + 1) & (size - 1);
            }
        }
        out[OK * n + r] = ok;
        out[IS_CALL * n + r] = call;
        out[TOKEN_END * n + r] = token_end;
        out[PID_AT * n + r] = pid_at;
        out[RET_AT * n + r] = ret_at;
        out[RET_END * n + r] = ret_end;
        out[USECS * n + r] = call ? 0 : usecs;
        out[FAILING * n + r] = !call && failing;
        out[GROUP * n + r] = group;
    }
    Py_END_ALLOW_THREADS
    free(slots);
    release_buffers(views, 4);
    Py_RETURN_NONE;
}

static PyObject *fixed_stamps(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *padded_obj, *starts_obj, *fixed_obj, *us_obj;
    if (!PyArg_ParseTuple(args, "OOOO", &padded_obj, &starts_obj, &fixed_obj, &us_obj)) return NULL;
    const BufferSpec specs[] = {
        {padded_obj, 0, 1, "padded"}, {starts_obj, 0, 8, "starts"}, {fixed_obj, 1, 1, "fixed"}, {us_obj, 1, 8, "stamp_us"}};
    Py_buffer views[4];
    if (get_buffers(specs, views, 4) < 0) return NULL;
    Py_ssize_t n = views[1].len / 8;
    if (views[2].len != n || views[3].len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "fixed_stamps: starts, fixed and stamp_us do not agree in length");
        release_buffers(views, 4);
        return NULL;
    }
    Codes t = {(const unsigned char *)views[0].buf, views[0].len};
    const int64_t *starts = (const int64_t *)views[1].buf;
    unsigned char *fixed = (unsigned char *)views[2].buf;
    int64_t *us = (int64_t *)views[3].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < n; r++) {
        int64_t s = starts[r];
        /* "[", five characters of spaces then at least one digit, ".", six digits, "]", no "[" after */
        int ok = at(&t, s) == '[' && at(&t, s + 6) == '.' && at(&t, s + 13) == ']' && at(&t, s + 14) != '[';
        int digit_seen = 0;
        int64_t seconds = 0, micros = 0;
        for (int k = 1; ok && k < 6; k++) {
            unsigned char ch = at(&t, s + k);
            if (ch >= '0' && ch <= '9') {
                digit_seen = 1;
                seconds = seconds * 10 + (ch - '0');
            } else if (ch != ' ' || digit_seen) {
                ok = 0;
            }
        }
        ok = ok && digit_seen;
        for (int k = 7; ok && k < 13; k++) {
            unsigned char ch = at(&t, s + k);
            if (ch < '0' || ch > '9') ok = 0;
            micros = micros * 10 + (ch - '0');
        }
        fixed[r] = (unsigned char)ok;
        us[r] = ok ? seconds * 1000000 + micros : 0;
    }
    Py_END_ALLOW_THREADS
    release_buffers(views, 4);
    Py_RETURN_NONE;
}

static PyObject *starts_with(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *padded_obj, *at_obj, *literals, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO!O", &padded_obj, &at_obj, &PyTuple_Type, &literals, &out_obj)) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(literals);
    for (Py_ssize_t k = 0; k < count; k++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(literals, k))) {
            PyErr_SetString(PyExc_TypeError, "starts_with: literals must be a tuple of bytes");
            return NULL;
        }
    }
    const BufferSpec specs[] = {{padded_obj, 0, 1, "padded"}, {at_obj, 0, 8, "at"}, {out_obj, 1, 1, "out"}};
    Py_buffer views[3];
    if (get_buffers(specs, views, 3) < 0) return NULL;
    Py_ssize_t n = views[1].len / 8, size = views[0].len;
    if (views[2].len != n) {
        PyErr_SetString(PyExc_ValueError, "starts_with: at and out do not agree in length");
        release_buffers(views, 3);
        return NULL;
    }
    const unsigned char *c = (const unsigned char *)views[0].buf;
    const int64_t *positions = (const int64_t *)views[1].buf;
    unsigned char *out = (unsigned char *)views[2].buf;
    for (Py_ssize_t r = 0; r < n; r++) {
        int64_t i = positions[r];
        unsigned char hit = 0;
        for (Py_ssize_t k = 0; !hit && k < count; k++) {
            PyObject *lit = PyTuple_GET_ITEM(literals, k);
            Py_ssize_t len = PyBytes_GET_SIZE(lit);
            hit = i >= 0 && i + len <= size && memcmp(c + i, PyBytes_AS_STRING(lit), (size_t)len) == 0;
        }
        out[r] = hit;
    }
    release_buffers(views, 3);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"codes", codes, METH_O, "One byte per character: a Latin-1 character's code, 0x80 for any other."},
    {"initcall_rows", initcall_rows, METH_VARARGS,
     "Read initcall_debug lines (padded codes, text starts, line ends) into out (9 x rows int64)."},
    {"fixed_stamps", fixed_stamps, METH_VARARGS,
     "Which lines (padded codes, line starts) start with a fixed-width printk stamp, and its us."},
    {"starts_with", starts_with, METH_VARARGS,
     "out[i] = 1 where the codes at at[i] start with one of the literals (a tuple of bytes)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_scan",
    .m_doc = "The block scan's hot loops.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__scan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "OUT_COLUMNS", OUT_COLUMNS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
