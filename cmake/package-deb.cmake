# `cpack -G DEB` in a build tree: a .deb of torchfix with its data under
# /usr/share/torchfix (found from /usr/bin/torchfix, see probe/data_dir.cpp).
# Meant for a TORCHFIX_STATIC build, whose only dependency is glibc: the
# package then depends on libc6 alone. A non-static build's .deb would need
# the -dev libraries' runtime packages, which are not declared here.

if(NOT SKBUILD)
  # Debian wants the licence as /usr/share/doc/<package>/copyright.
  install(FILES LICENSE DESTINATION share/doc/torchfix-gpu RENAME copyright)
endif()

set(CPACK_PACKAGE_NAME torchfix-gpu)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "torchfix")
set(CPACK_PACKAGE_CONTACT "torchfix developers <torchfix@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "finds why PyTorch does not run on your NVIDIA GPU, and prints the fix")
set(CPACK_PACKAGE_DESCRIPTION
    "torchfix probes the GPUs, driver, CUDA toolkits, host compilers and Python environments, reads which SASS/PTX archs torch and its extensions really contain, and prints the fix for 'no kernel image is available'. Installs the command `torchfix`.")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
else()
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
endif()
if(TORCHFIX_ZIG_TARGET)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${TORCHFIX_ZIG_GLIBC})")
  # HTTPS clones dlopen the system's OpenSSL (docs/install.md): apt installs
  # it with the package unless told not to; everything else works without it.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libssl3 | libssl1.1")
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dpkg-shlibdeps names the versions
endif()
set(CPACK_GENERATOR DEB)
include(CPack)
