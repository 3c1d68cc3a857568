# SPDX-License-Identifier: MIT
# 0. The README's "Installing" sequence for a private prefix, as written there
#    (make install, pkg-config, cc with an rpath or LD_LIBRARY_PATH, ./app);
#    and `make install PREFIX=/usr` staged with DESTDIR, into Debian's
#    multiarch library directory.
# Then install weft into a fresh prefix and build programs against it three ways:
#   1. pkg-config --cflags --libs weft, the compiler called by hand;
#   2. find_package(weft) (tests/install/consumer, and every example);
#   3. add_subdirectory of the source tree (tests/install/consumer);
#   4. the same with BUILD_SHARED_LIBS=OFF, the program installed and run
#      from its prefix.
# Each program is run. Then both installs are undone (make uninstall, and the
# build's uninstall target): no file is left. Under a sanitizer the consumers are built with the same
# sanitizer, since the installed library is instrumented.
#
# cmake -DSOURCE_DIR= -DBUILD_DIR= -DWORK= -DC_COMPILER= [-DCXX_COMPILER=]
#       [-DSANITIZE=address|thread] [-DBUILD_TYPE=] -DGENERATOR= -DLIBDIR= [-DALPI=ON] -P run.cmake
# (ALPI: the build has libweft-alpi, which is checked as weft is: files,
# pkg-config, find_package(weft COMPONENTS alpi).)
# (LIBDIR: the build's CMAKE_INSTALL_LIBDIR, relative to the prefix.)
foreach(v SOURCE_DIR BUILD_DIR WORK C_COMPILER GENERATOR LIBDIR)
  if(NOT ${v})
    message(FATAL_ERROR "run.cmake: -D${v}=... is required")
  endif()
endforeach()

set(prefix ${WORK}/prefix)
# The soname's version, as CMakeLists.txt derives it from version.h: MAJOR
# from 1.0 on, MAJOR.MINOR before.
file(READ ${SOURCE_DIR}/include/weft/version.h version_h)
string(REGEX MATCH "WEFT_VERSION_MAJOR ([0-9]+)" _ "${version_h}")
set(major ${CMAKE_MATCH_1})
string(REGEX MATCH "WEFT_VERSION_MINOR ([0-9]+)" _ "${version_h}")
if(major EQUAL 0)
  set(soversion ${major}.${CMAKE_MATCH_1})
else()
  set(soversion ${major})
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

if(SANITIZE STREQUAL "address")
  set(san_flags "-fsanitize=address,undefined -fno-omit-frame-pointer")
elseif(SANITIZE STREQUAL "thread")
  set(san_flags "-fsanitize=thread")
else()
  set(san_flags "")
endif()

# step(NAME COMMAND...): run it; on failure print its output and stop.
function(step name)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(TIMESTAMP t1 "%s")
  math(EXPR dt "${t1} - ${t0}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (${rc}):\n${out}")
  endif()
  message(STATUS "ok ${name} (${dt} s)")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# no_files_left(WHAT DIR): nothing but directories under DIR, and no
# directory of weft's own (named weft).
function(no_files_left what dir)
  file(GLOB_RECURSE left LIST_DIRECTORIES false ${dir}/*)
  file(GLOB_RECURSE weft_dirs LIST_DIRECTORIES true ${dir}/*weft)
  list(FILTER weft_dirs INCLUDE REGEX "/weft$")
  if(left OR weft_dirs)
    message(FATAL_ERROR "${what} left: ${left} ${weft_dirs}")
  endif()
endfunction()

# 0. The README's block, as a user would type it into a shell, with two shims:
# `make` is this source tree's Makefile building in the work directory (it
# builds its own, uninstrumented library: so `cc` adds no sanitizer), and `cc`
# is this build's C compiler. Nothing from the caller's environment that could
# find the library for it: PKG_CONFIG_PATH, LD_LIBRARY_PATH; nor the MAKEFLAGS
# of a `make check` that runs this test.
find_program(MAKE_PROGRAM NAMES make gmake)
find_program(SH sh)
if(NOT MAKE_PROGRAM OR NOT SH)
  message(FATAL_ERROR "make or sh not found (apt-get install build-essential)")
endif()
file(READ ${SOURCE_DIR}/README.md readme)
set(marker "<!-- tests/install/run.cmake runs the next block -->")
string(FIND "${readme}" "${marker}" at)
if(at LESS 0)
  message(FATAL_ERROR "README.md has no line '${marker}'")
endif()
string(SUBSTRING "${readme}" ${at} -1 readme)
if(NOT readme MATCHES "\n```sh\n([^`]*)```")
  message(FATAL_ERROR "README.md: no ```sh block after '${marker}'")
endif()
set(block "${CMAKE_MATCH_1}")
set(readme_build ${WORK}/readme-build)
file(WRITE ${WORK}/readme.sh "set -e
unset PKG_CONFIG_PATH LD_LIBRARY_PATH MAKEFLAGS MFLAGS MAKELEVEL
HOME='${WORK}/home'
export HOME
make() { '${MAKE_PROGRAM}' -C '${SOURCE_DIR}' --no-print-directory INSTALL_BUILD='${readme_build}' "$@"; }
cc() { '${C_COMPILER}' "$@"; }
mkdir -p "$HOME" '${WORK}/readme'
cd '${WORK}/readme'
cp '${SOURCE_DIR}/tests/install/consumer/consumer.c' app.c
set -x
${block}")
step("README: install into a private prefix, build, run" ${SH} ${WORK}/readme.sh)
message(STATUS "${step_output}")

# make install PREFIX=/usr, staged: the library goes where Debian puts it
# (GNUInstallDirs: lib/<multiarch>, which ld.so searches without help), and
# weft.pc says so. The build above is configured again, not rebuilt.
execute_process(COMMAND ${C_COMPILER} -print-multiarch OUTPUT_VARIABLE multiarch
  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(EXISTS /etc/debian_version AND multiarch)
  step("make install PREFIX=/usr DESTDIR=" ${CMAKE_COMMAND} -E env --unset=MAKEFLAGS
       --unset=MAKELEVEL --unset=MFLAGS ${MAKE_PROGRAM} -C ${SOURCE_DIR} --no-print-directory
       install PREFIX=/usr DESTDIR=${WORK}/destdir INSTALL_BUILD=${readme_build})
  foreach(f lib/${multiarch}/libweft.so.${soversion} lib/${multiarch}/pkgconfig/weft.pc include/weft.h)
    if(NOT EXISTS ${WORK}/destdir/usr/${f})
      message(FATAL_ERROR "make install PREFIX=/usr: no /usr/${f}")
    endif()
  endforeach()
  file(STRINGS ${WORK}/destdir/usr/lib/${multiarch}/pkgconfig/weft.pc pc_libdir REGEX "^libdir=")
  if(NOT pc_libdir STREQUAL "libdir=\${prefix}/lib/${multiarch}")
    message(FATAL_ERROR "weft.pc for /usr: ${pc_libdir}")
  endif()
  # make uninstall takes every file away again, and weft's own directories.
  step("make uninstall PREFIX=/usr DESTDIR=" ${CMAKE_COMMAND} -E env --unset=MAKEFLAGS
       --unset=MAKELEVEL --unset=MFLAGS ${MAKE_PROGRAM} -C ${SOURCE_DIR} --no-print-directory
       uninstall PREFIX=/usr DESTDIR=${WORK}/destdir INSTALL_BUILD=${readme_build})
  no_files_left("make uninstall" ${WORK}/destdir)
endif()

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
step("installed weft-trace2svg --help" ${prefix}/bin/weft-trace2svg --help)
foreach(f include/weft.h include/weft/version.h include/weft/join.h include/weft/config.h include/weft.hpp ${LIBDIR}/libweft.a
          ${LIBDIR}/pkgconfig/weft.pc ${LIBDIR}/cmake/weft/weftConfig.cmake
          ${LIBDIR}/cmake/weft/weftConfigVersion.cmake ${LIBDIR}/cmake/weft/weftTargets.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
if(ALPI)
  foreach(f include/weft/alpi.h ${LIBDIR}/libweft-alpi.so ${LIBDIR}/libweft-alpi.so.1
            ${LIBDIR}/pkgconfig/weft-alpi.pc ${LIBDIR}/cmake/weft/weftAlpiTargets.cmake)
    if(NOT EXISTS ${prefix}/${f})
      message(FATAL_ERROR "not installed: ${f}")
    endif()
  endforeach()
endif()
file(GLOB sonames ${prefix}/${LIBDIR}/libweft.so.*)
if(NOT EXISTS ${prefix}/${LIBDIR}/libweft.so.${soversion} OR NOT EXISTS ${prefix}/${LIBDIR}/libweft.so)
  message(FATAL_ERROR "shared library not installed as libweft.so.${soversion}: ${sonames}")
endif()

set(consumer ${SOURCE_DIR}/tests/install/consumer)
set(common -G ${GENERATOR} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    "-DCMAKE_C_FLAGS=${san_flags}" "-DCMAKE_EXE_LINKER_FLAGS=${san_flags}")
if(CXX_COMPILER)
  list(APPEND common -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${san_flags}"
       -DCONSUMER_CXX=ON)
  set(programs consumer consumer_static consumer_cpp)
else()
  set(programs consumer consumer_static)
endif()
set(package_programs ${programs})
if(ALPI)
  list(APPEND package_programs consumer_alpi)
endif()

# 1. pkg-config, as a Makefile would use it.
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config not found (apt-get install pkg-config)")
endif()
set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
# pkg_is(EXPECTED ARGS...): pkg-config ARGS weft prints exactly EXPECTED.
function(pkg_is expected)
  step("pkg-config ${ARGN}" ${PKG_CONFIG} ${ARGN} weft)
  string(STRIP "${step_output}" out)
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "pkg-config ${ARGN} weft: '${out}', expected '${expected}'")
  endif()
endfunction()
pkg_is("-I${prefix}/include -L${prefix}/${LIBDIR} -lweft" --cflags --libs)
pkg_is("${prefix}/${LIBDIR}" --variable=libdir)
set(pc_flags "-I${prefix}/include -L${prefix}/${LIBDIR} -lweft")
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(san UNIX_COMMAND "${san_flags}")
step("pkg-config: build" ${C_COMPILER} -std=c11 ${san} ${consumer}/consumer.c ${pc_flags}
     -Wl,-rpath,${prefix}/${LIBDIR} -o ${WORK}/consumer_pc)
step("pkg-config: run" ${WORK}/consumer_pc)
if(CXX_COMPILER)
  step("pkg-config: build C++" ${CXX_COMPILER} -std=c++17 ${san} ${consumer}/consumer.cpp
       ${pc_flags} -Wl,-rpath,${prefix}/${LIBDIR} -o ${WORK}/consumer_pc_cpp)
  step("pkg-config: run C++" ${WORK}/consumer_pc_cpp)
endif()
if(ALPI)
  step("pkg-config --cflags --libs weft-alpi" ${PKG_CONFIG} --cflags --libs weft-alpi)
  string(STRIP "${step_output}" alpi_flags)
  if(NOT alpi_flags STREQUAL "-I${prefix}/include -L${prefix}/${LIBDIR} -lweft-alpi")
    message(FATAL_ERROR "pkg-config --cflags --libs weft-alpi: '${alpi_flags}'")
  endif()
  separate_arguments(alpi_flags UNIX_COMMAND "${alpi_flags}")
  step("pkg-config: build ALPI" ${C_COMPILER} -std=c11 ${san} ${consumer}/consumer_alpi.c
       ${alpi_flags} -Wl,-rpath,${prefix}/${LIBDIR} -o ${WORK}/consumer_pc_alpi)
  step("pkg-config: run ALPI" ${WORK}/consumer_pc_alpi)
endif()

# 2. find_package(weft): the consumer, then every example.
step("find_package: configure" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK}/package ${common}
     -DWEFT_FROM=package -DCMAKE_PREFIX_PATH=${prefix} -DCONSUMER_ALPI=${ALPI})
step("find_package: build" ${CMAKE_COMMAND} --build ${WORK}/package --parallel 2)
foreach(p ${package_programs})
  step("find_package: run ${p}" ${WORK}/package/${p})
endforeach()
step("examples: configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${WORK}/examples
     -G ${GENERATOR} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
     "-DCMAKE_C_FLAGS=${san_flags}" "-DCMAKE_EXE_LINKER_FLAGS=${san_flags}"
     -DCMAKE_PREFIX_PATH=${prefix})
step("examples: build" ${CMAKE_COMMAND} --build ${WORK}/examples --parallel 2)
step("examples: run dirsize" ${CMAKE_COMMAND} -E chdir ${WORK}/examples
     ${CMAKE_CTEST_COMMAND} --output-on-failure -R "example\\.dirsize")

# 3. add_subdirectory of the source tree (weft built again, as a sub-project).
step("add_subdirectory: configure" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK}/subdirectory
     ${common} -DWEFT_FROM=subdirectory -DWEFT_SOURCE_DIR=${SOURCE_DIR}
     -DWEFT_SANITIZE=${SANITIZE})
step("add_subdirectory: build" ${CMAKE_COMMAND} --build ${WORK}/subdirectory --parallel 2)
foreach(p ${programs})
  step("add_subdirectory: run ${p}" ${WORK}/subdirectory/${p})
endforeach()

# 4. Vendored, then installed with the parent's program: weft::weft follows
# the parent's BUILD_SHARED_LIBS, so with OFF the installed program needs
# no libweft.so (it used to be linked to the shared library, and failed to
# start from its install prefix).
step("vendored static: configure" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK}/vendored
     ${common} -DWEFT_FROM=subdirectory -DWEFT_SOURCE_DIR=${SOURCE_DIR}
     -DWEFT_SANITIZE=${SANITIZE} -DBUILD_SHARED_LIBS=OFF)
step("vendored static: build" ${CMAKE_COMMAND} --build ${WORK}/vendored --parallel 2 --target consumer)
step("vendored static: install" ${CMAKE_COMMAND} --install ${WORK}/vendored --prefix ${WORK}/app)
step("vendored static: run the installed program" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH
     ${WORK}/app/bin/consumer)

# The uninstall target of the build that installed into the prefix.
step("uninstall" ${CMAKE_COMMAND} --build ${BUILD_DIR} --target uninstall)
no_files_left("uninstall" ${prefix})

file(REMOVE_RECURSE ${WORK})
