# ringfence — top-level make wrapper around meson/ninja.
#
#   make            build build/ringfence (installs missing build packages)
#   make check      install deps, build release + test + sanitizer builds, run every test
#   make demo       install deps, build, narrate an isolated agent run
#   make install    install to $(PREFIX) (default /usr/local)
#   make deb        build/ringfence_VERSION_amd64.deb (debhelper; lintian clean)
#   make bench      start-latency benchmark against bubblewrap (not part of check)
#   make format     clang-format the sources

PREFIX ?= /usr/local
MESON  ?= meson
NINJA  ?= ninja

.PHONY: all deps deps-build check demo install deb bench format clean

all: deps-build build/build.ninja
	$(NINJA) -C build

deps-build:
	@scripts/deps.sh --build

deps:
	@scripts/deps.sh

build/build.ninja:
	$(MESON) setup build --prefix=$(PREFIX) >/dev/null

# A build with fault injection and layer switches (tests only, never installed).
build-test/build.ninja:
	$(MESON) setup build-test -Dtest_build=true >/dev/null

# clang + ASan + UBSan, test switches, libFuzzer targets.
build-asan/build.ninja:
	CC=clang $(MESON) setup build-asan -Dtest_build=true -Dfuzz=true \
	  -Db_sanitize=address,undefined -Db_lundef=false \
	  -Dc_args=-fno-sanitize-recover=all -Dbuildtype=debug >/dev/null

check: deps build/build.ninja build-test/build.ninja build-asan/build.ninja
	$(NINJA) -C build
	$(NINJA) -C build-test
	$(NINJA) -C build-asan
	@scripts/check.sh

demo: deps all
	@scripts/demo.sh

install: all
	$(MESON) install -C build

deb: deps
	@scripts/deb.sh

bench: deps all build-test/build.ninja
	$(NINJA) -C build-test
	@bench/start
	@bench/layers

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-test build-asan
