// bench_rusage CMD [ARGS...]: runs CMD, waits for it, and prints its CPU seconds (user + system)
// and peak resident memory (KiB) on one line: "CPU_SECONDS MAXRSS_KIB". A process's peak memory
// counts what its parent held when it forked it (Linux carries the old image's peak across exec),
// so the benchmarks that measure a fresh process's peak start it from this small one.
#include <cstdio>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_rusage CMD [ARGS...]\n");
        return 2;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (std::freopen("/dev/null", "w", stdout) == nullptr) {
            ::_exit(126);
        }
        ::execv(argv[1], argv + 1);
        ::_exit(127);
    }
    int status = 0;
    rusage u{};
    if (pid < 0 || ::wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status)) {
        return 1;
    }
    const double cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                       static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
    std::printf("%.6f %ld\n", cpu, u.ru_maxrss);
    return WEXITSTATUS(status);
}
