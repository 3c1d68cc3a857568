# Install weft into a fresh prefix and build programs against it three ways:
#   1. pkg-config --cflags --libs weft, the compiler called by hand;
#   2. find_package(weft) (tests/install/consumer, and every example);
#   3. add_subdirectory of the source tree (tests/install/consumer).
# Each program is run. Under a sanitizer the consumers are built with the same
# sanitizer, since the installed library is instrumented.
#
# cmake -DSOURCE_DIR= -DBUILD_DIR= -DWORK= -DC_COMPILER= [-DCXX_COMPILER=]
#       [-DSANITIZE=address|thread] [-DBUILD_TYPE=] -DGENERATOR= -P run.cmake
foreach(v SOURCE_DIR BUILD_DIR WORK C_COMPILER GENERATOR)
  if(NOT ${v})
    message(FATAL_ERROR "run.cmake: -D${v}=... is required")
  endif()
endforeach()

set(prefix ${WORK}/prefix)
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

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/weft.h include/weft/version.h include/weft.hpp lib/libweft.a
          lib/pkgconfig/weft.pc lib/cmake/weft/weftConfig.cmake
          lib/cmake/weft/weftConfigVersion.cmake lib/cmake/weft/weftTargets.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB sonames ${prefix}/lib/libweft.so.*)
file(READ ${SOURCE_DIR}/include/weft/version.h version_h)
string(REGEX MATCH "WEFT_VERSION_MAJOR ([0-9]+)" _ "${version_h}")
if(NOT EXISTS ${prefix}/lib/libweft.so.${CMAKE_MATCH_1} OR NOT EXISTS ${prefix}/lib/libweft.so)
  message(FATAL_ERROR "shared library not installed as libweft.so.${CMAKE_MATCH_1}: ${sonames}")
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

# 1. pkg-config, as a Makefile would use it.
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config not found (apt-get install pkg-config)")
endif()
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
step("pkg-config" ${PKG_CONFIG} --cflags --libs weft)
string(STRIP "${step_output}" pc_flags)
string(FIND "${pc_flags}" "-I${prefix}/include" has_include)
string(FIND "${pc_flags}" "-L${prefix}/lib -lweft" has_lib)
if(has_include LESS 0 OR has_lib LESS 0)
  message(FATAL_ERROR "pkg-config --cflags --libs weft: ${pc_flags}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(san UNIX_COMMAND "${san_flags}")
step("pkg-config: build" ${C_COMPILER} -std=c11 ${san} ${consumer}/consumer.c ${pc_flags}
     -Wl,-rpath,${prefix}/lib -o ${WORK}/consumer_pc)
step("pkg-config: run" ${WORK}/consumer_pc)
if(CXX_COMPILER)
  step("pkg-config: build C++" ${CXX_COMPILER} -std=c++17 ${san} ${consumer}/consumer.cpp
       ${pc_flags} -Wl,-rpath,${prefix}/lib -o ${WORK}/consumer_pc_cpp)
  step("pkg-config: run C++" ${WORK}/consumer_pc_cpp)
endif()

# 2. find_package(weft): the consumer, then every example.
step("find_package: configure" ${CMAKE_COMMAND} -S ${consumer} -B ${WORK}/package ${common}
     -DWEFT_FROM=package -DCMAKE_PREFIX_PATH=${prefix})
step("find_package: build" ${CMAKE_COMMAND} --build ${WORK}/package --parallel 2)
foreach(p ${programs})
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

file(REMOVE_RECURSE ${WORK})
