// A zip archive (a Python wheel) read without unpacking it: its central directory, and one
// member extracted (stored, or deflated: zlib's inflate over raw deflate data) into a file that
// appears only when it is complete and its CRC-32 matches. ZIP64 and encrypted archives are
// refused with a message. Plain blocking code: callers run it off the GUI thread.
#pragma once
#include <QCoreApplication>
#include <QList>
#include <QString>
#include <functional>
#include <stop_token>

struct ZipMember {
    QString name;
    int method = 0;  // 0 stored, 8 deflated
    quint32 crc32 = 0;
    qint64 compressedSize = 0;
    qint64 size = 0;
    qint64 localHeaderOffset = 0;
    bool encrypted = false;
};

class ZipArchive
{
    Q_DECLARE_TR_FUNCTIONS(ZipArchive)
public:
    // Reads the central directory of `path`; false with error() saying what is wrong.
    bool open(const QString &path);
    QString error() const { return m_error; }
    const QList<ZipMember> &members() const { return m_members; }
    // The first member whose name ends with `suffix` (case-insensitive); null when none does.
    const ZipMember *findBySuffix(const QString &suffix) const;

    // Writes the member's bytes to `target` (atomically: a temporary file beside it, renamed
    // when complete and checked). `progress(done, total)` is called with uncompressed bytes after
    // each chunk. False with error() set on a damaged member, a write error (a full disk) or a
    // stop request; then `target` is left as it was.
    bool extract(const ZipMember &member, const QString &target,
                 const std::function<void(qint64, qint64)> &progress, std::stop_token stop);

    // Whether the last failure was a stop request.
    bool cancelled() const { return m_cancelled; }

private:
    bool fail(const QString &message);

    QString m_path, m_error;
    QList<ZipMember> m_members;
    bool m_cancelled = false;
};

// The SHA-256 of a file as lower-case hex; empty with `error` set when it cannot be read or on
// a stop request (`error` empty then). `progress(done, total)` after each chunk.
QString sha256OfFile(const QString &path, QString *error, const std::function<void(qint64, qint64)> &progress,
                     std::stop_token stop);
