// Prints the reference hashes of backends/gguf's TestGGMLMathMatchesReference:
// glibc's cosf, sinf, expf and tanhf, ggml's vectorised SiLU (ggml_vec_swiglu_f32
// with a gate of ones) and ggml's GELU table, on the inputs that test defines.
// Build against the llama.cpp tree .ci/llama-cpp-bundle.sh builds (the one llama-server
// comes from), on the machine whose numbers are compared (-march=native there):
//   B=~/.cache/glossobench/llama.cpp-3.21.1/src/build
//   g++ -O2 -ffp-contract=off testdata/gguf/ggmlmath_ref.cpp $B/ggml/src/libggml-cpu.a \
//       $B/ggml/src/libggml-base.a -fopenmp -lm -o /tmp/ggmlmath_ref && /tmp/ggmlmath_ref
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
void ggml_vec_swiglu_f32(const int n, float * y, const float * x, const float * g);  // vec.cpp
extern uint16_t ggml_table_gelu_f16[1 << 16];  // ggml-cpu.c
void ggml_cpu_init(void);
}

static const int N = 1 << 18;

// inputs: every bit pattern class (a Weyl sequence over uint32), then N evenly spaced in [-r, r)
static std::vector<float> inputs(float r) {
    std::vector<float> x(2 * N);
    for (uint32_t i = 0; i < (uint32_t)N; i++) {
        uint32_t u = i * 0x9E3779B1u;
        memcpy(&x[i], &u, 4);
        x[N + i] = ((float)i / (float)N - 0.5f) * 2.0f * r;
    }
    return x;
}

static uint64_t fnv(const std::vector<float> & y) {
    uint64_t h = 1469598103934665603ull;
    for (float v : y) {
        uint32_t u;
        memcpy(&u, &v, 4);
        if (v != v) u = 0x7fc00000u;
        for (int b = 0; b < 4; b++) { h ^= (u >> (8 * b)) & 0xff; h *= 1099511628211ull; }
    }
    return h;
}

template <typename F> static void report(const char * name, float r, F f) {
    std::vector<float> x = inputs(r), y(x.size());
    for (size_t i = 0; i < x.size(); i++) y[i] = f(x[i]);
    printf("%s %#018llx\n", name, (unsigned long long) fnv(y));
}

int main() {
    ggml_cpu_init();
    report("cosf", 5000, [](float v) { return cosf(v); });
    report("sinf", 5000, [](float v) { return sinf(v); });
    report("expf", 120, [](float v) { return expf(v); });
    report("tanhf", 12, [](float v) { return tanhf(v); });
    std::vector<float> x = inputs(40), ones(x.size(), 1.0f), y(x.size());
    ggml_vec_swiglu_f32((int) x.size(), y.data(), x.data(), ones.data());
    printf("silu %#018llx\n", (unsigned long long) fnv(y));
    std::vector<float> g(1 << 16);
    for (int i = 0; i < (1 << 16); i++) {
        uint16_t h = ggml_table_gelu_f16[i];
        uint32_t u = (uint32_t) h;  // hashed as the raw f16 bits
        memcpy(&g[i], &u, 4);
    }
    printf("gelu %#018llx\n", (unsigned long long) fnv(g));
    return 0;
}
