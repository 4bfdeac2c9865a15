// MappedFile: read-only memory map of a whole weights file. The platform part (POSIX mmap here;
// a Windows port replaces only this file with CreateFileMapping/MapViewOfFile) stays small.
#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exl/error.h"
#include "exl/tensor_store.h"

namespace exl {
namespace {

// Closes a descriptor when the scope ends (the map keeps the pages alive on its own).
struct FdGuard {
  int fd = -1;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

std::unique_ptr<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  FdGuard guard;
  guard.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (guard.fd < 0) {
    const int err = errno;
    throw Error(ErrorKind::io, "cannot open: " + errno_text(err), path.string());
  }
  struct stat st {};
  if (::fstat(guard.fd, &st) != 0) {
    const int err = errno;
    throw Error(ErrorKind::io, "cannot stat: " + errno_text(err), path.string());
  }
  if (!S_ISREG(st.st_mode)) throw Error(ErrorKind::io, "not a regular file", path.string());

  std::unique_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<std::size_t>(st.st_size);
  if (file->size_ == 0) return file;  // nothing to map; readers see an empty file

  void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, guard.fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    throw Error(err == ENOMEM ? ErrorKind::out_of_memory : ErrorKind::io,
                "cannot memory-map " + std::to_string(file->size_) + " bytes: " + errno_text(err),
                path.string());
  }
  file->data_ = static_cast<const std::byte*>(p);
  return file;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace exl
