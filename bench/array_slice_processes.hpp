// bench_array --slice-processes: what checksums cost a program that opens a file, reads one
// slice and exits (issue 41's table): `b2nd export FILE OUT.npy --slice S`, each run a fresh
// process, on the array written with checksums and without; `pairs` alternating pairs, CPU time
// (user + system) and peak memory (maxrss) of each process (measured by bench_rusage); printed:
// the medians and the median of the per-pair ratios (with / without), with their ranges.
#pragma once

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "array_workloads.hpp"
#include <sys/wait.h>
#include <unistd.h>

namespace b2nd::bench::array {

/// One run of `b2nd export path out --slice slice --overwrite`: (CPU seconds, maxrss KiB),
/// started through bench_rusage (rusage_runner.cpp), so that the peak is the process's own.
inline std::pair<double, long> export_process(const std::string& path,
                                              const std::string& out,
                                              const std::string& slice) {
    int fd[2];
    if (::pipe(fd) != 0) {
        std::perror("pipe");
        std::exit(1);
    }
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(fd[1], 1);
        ::close(fd[0]);
        ::close(fd[1]);
        ::execl(B2ND_RUSAGE, "bench_rusage", B2ND_CLI, "export", path.c_str(), out.c_str(),
                "--slice", slice.c_str(), "--overwrite", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(fd[1]);
    char line[128] = {0};
    std::size_t got = 0;
    for (ssize_t n;
         got + 1 < sizeof line && (n = ::read(fd[0], line + got, sizeof line - 1 - got)) > 0;) {
        got += static_cast<std::size_t>(n);
    }
    ::close(fd[0]);
    int status = 0;
    double cpu = 0;
    long rss = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        std::sscanf(line, "%lf %ld", &cpu, &rss) != 2) {
        std::fprintf(stderr, "b2nd export %s --slice %s failed\n", path.c_str(), slice.c_str());
        std::exit(1);
    }
    return {cpu, rss};
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

inline void bench_slice_processes(const Spec& s,
                                  const std::vector<std::uint8_t>& data,
                                  const std::string& dir,
                                  const std::vector<std::string>& slices,
                                  int pairs) {
    const b2nd::DType dt = b2nd::DType::parse(s.dtype);
    std::string paths[2];
    for (const bool sums : {false, true}) {
        const std::string path = dir + "/" + s.name + (sums ? ".sums.b2nd" : ".plain.b2nd");
        b2nd::CreateOptions o = spec_options(s);
        o.checksums = sums;
        (void)b2nd::AnyArray::create_from(path, dt, s.shape, {data.data(), data.size()}, o);
        paths[sums ? 1 : 0] = path;
    }
    const std::string out = dir + "/slice.npy";
    for (const std::string& slice : slices) {
        std::vector<double> cpu[2], mem[2], cpu_ratio, mem_ratio;
        (void)export_process(paths[1], out, slice);  // the page cache holds both files
        (void)export_process(paths[0], out, slice);
        for (int p = 0; p < pairs; ++p) {
            for (const int k : {p % 2, 1 - p % 2}) {  // alternating which goes first
                const auto [c, m] = export_process(paths[k], out, slice);
                cpu[k].push_back(c);
                mem[k].push_back(static_cast<double>(m));
            }
            cpu_ratio.push_back(cpu[1].back() / cpu[0].back());
            mem_ratio.push_back(mem[1].back() / mem[0].back());
        }
        const auto [cr0, cr1] = std::minmax_element(cpu_ratio.begin(), cpu_ratio.end());
        const auto [mr0, mr1] = std::minmax_element(mem_ratio.begin(), mem_ratio.end());
        std::printf(
            "%-16s slice %-22s CPU %6.1f / %6.1f ms  ratio %.3f (%.3f-%.3f)   peak %7.1f / "
            "%7.1f MiB  ratio %.3f (%.3f-%.3f)\n",
            s.name.c_str(), slice.c_str(), median(cpu[1]) * 1e3, median(cpu[0]) * 1e3,
            median(cpu_ratio), *cr0, *cr1, median(mem[1]) / 1024, median(mem[0]) / 1024,
            median(mem_ratio), *mr0, *mr1);
        std::fflush(stdout);
    }
    std::filesystem::remove(out);
    for (const std::string& p : paths) {
        std::filesystem::remove(p);
    }
}

}  // namespace b2nd::bench::array
