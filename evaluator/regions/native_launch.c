/* The region launcher's per-call path in C: a region kernel's launch costs the host what ATen's does.
 *
 * Through ctypes each call built argument objects, an address array and an 11-argument foreign call
 * (about 15 us of host time against ATen's 6, which a latency-bound model pays per kernel). Here a plan
 * (the function handle, grid, block and argument layout) is packed once into a capsule; a call passes the
 * plan, the context, the stream and the argument values, and reaches cuLaunchKernel through the address
 * the Python side looked up in libcuda (no link against the driver: the module builds without CUDA).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         void *, void **, void **);
typedef int (*get_context_fn)(void **);
typedef int (*set_context_fn)(void *);

#define MAX_ARGS 64
#define PLAN "kg_launch_plan"

typedef struct {
    void *function;
    unsigned grid[3], block[3];
    int n_pointers, n_floats; /* then one int64: the element count */
} plan_t;

static launch_fn cu_launch = NULL;
static get_context_fn cu_get_context = NULL;
static set_context_fn cu_set_context = NULL;

static void drop_plan(PyObject *capsule) { PyMem_Free(PyCapsule_GetPointer(capsule, PLAN)); }

static void *address(PyObject *value) {
    void *p = PyLong_AsVoidPtr(value);
    return (p == NULL && PyErr_Occurred()) ? NULL : p;
}

/* bind(cuLaunchKernel, cuCtxGetCurrent, cuCtxSetCurrent): the driver's entry points, as addresses. */
static PyObject *bind(PyObject *self, PyObject *args) {
    PyObject *launch, *get, *set;
    if (!PyArg_ParseTuple(args, "OOO", &launch, &get, &set)) return NULL;
    cu_launch = (launch_fn)address(launch);
    cu_get_context = (get_context_fn)address(get);
    cu_set_context = (set_context_fn)address(set);
    if (PyErr_Occurred()) return NULL;
    if (!cu_launch || !cu_get_context || !cu_set_context) {
        PyErr_SetString(PyExc_ValueError, "bind needs three non-null driver entry points");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* plan(function, (gx, gy, gz), (bx, by, bz), n_pointers, n_floats) -> capsule */
static PyObject *plan(PyObject *self, PyObject *args) {
    PyObject *function;
    plan_t p;
    if (!PyArg_ParseTuple(args, "O(III)(III)ii", &function, &p.grid[0], &p.grid[1], &p.grid[2],
                          &p.block[0], &p.block[1], &p.block[2], &p.n_pointers, &p.n_floats))
        return NULL;
    p.function = address(function);
    if (PyErr_Occurred()) return NULL;
    if (p.n_pointers < 0 || p.n_floats < 0 || p.n_pointers + p.n_floats + 1 > MAX_ARGS) {
        PyErr_Format(PyExc_ValueError, "a region kernel takes at most %d arguments", MAX_ARGS);
        return NULL;
    }
    plan_t *kept = PyMem_Malloc(sizeof(plan_t));
    if (!kept) return PyErr_NoMemory();
    *kept = p;
    PyObject *capsule = PyCapsule_New(kept, PLAN, drop_plan);
    if (!capsule) PyMem_Free(kept);
    return capsule;
}

/* launch(plan, context, stream, *pointers, *floats, count) -> the driver's result code */
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 3) {
        PyErr_SetString(PyExc_TypeError, "launch(plan, context, stream, *arguments)");
        return NULL;
    }
    plan_t *p = PyCapsule_GetPointer(args[0], PLAN);
    if (!p) return NULL;
    if (!cu_launch) {
        PyErr_SetString(PyExc_RuntimeError, "the driver's entry points are not bound");
        return NULL;
    }
    if (nargs != 3 + p->n_pointers + p->n_floats + 1) {
        PyErr_Format(PyExc_TypeError, "this kernel takes %d pointers, %d floats and a count",
                     p->n_pointers, p->n_floats);
        return NULL;
    }
    void *context = address(args[1]);
    void *stream = address(args[2]);
    union {
        void *pointer;
        float value;
        long long count;
    } slots[MAX_ARGS];
    void *params[MAX_ARGS];
    Py_ssize_t k = 3;
    int i = 0;
    for (int j = 0; j < p->n_pointers; ++j, ++i, ++k) slots[i].pointer = address(args[k]);
    for (int j = 0; j < p->n_floats; ++j, ++i, ++k) slots[i].value = (float)PyFloat_AsDouble(args[k]);
    slots[i].count = PyLong_AsLongLong(args[k]);
    if (PyErr_Occurred()) return NULL;
    for (int j = 0; j <= i; ++j) params[j] = &slots[j];
    void *current = NULL;
    int result = cu_get_context(&current);
    if (result == 0 && current != context) result = cu_set_context(context);
    if (result == 0)
        result = cu_launch(p->function, p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1],
                           p->block[2], 0, stream, params, NULL);
    return PyLong_FromLong(result);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "bind the driver's entry points"},
    {"plan", plan, METH_VARARGS, "pack a kernel's launch plan"},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL, "launch a planned kernel"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kg_native_launch", NULL, -1, methods};

PyMODINIT_FUNC PyInit_kg_native_launch(void) { return PyModule_Create(&module); }
