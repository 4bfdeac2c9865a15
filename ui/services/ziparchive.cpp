#include "services/ziparchive.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <algorithm>
#include <vector>
#include <zlib.h>

namespace {

constexpr quint32 kEndOfCentralDirectory = 0x06054b50;
constexpr quint32 kCentralEntry = 0x02014b50;
constexpr quint32 kLocalHeader = 0x04034b50;
constexpr qint64 kChunk = 1 << 20;

quint16 u16(const uchar *p) { return quint16(p[0] | (p[1] << 8)); }
quint32 u32(const uchar *p) { return quint32(p[0]) | (quint32(p[1]) << 8) | (quint32(p[2]) << 16) | (quint32(p[3]) << 24); }

// zlib's inflate state, ended when it goes out of scope.
struct Inflater {
    z_stream zs{};
    bool ready = false;
    Inflater() { ready = inflateInit2(&zs, -MAX_WBITS) == Z_OK; }  // raw deflate: no zlib header
    ~Inflater()
    {
        if (ready)
            inflateEnd(&zs);
    }
};

}  // namespace

bool ZipArchive::fail(const QString &message)
{
    m_error = message;
    return false;
}

bool ZipArchive::open(const QString &path)
{
    m_path = path;
    m_members.clear();
    m_error.clear();
    m_cancelled = false;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(tr("Cannot read %1: %2.").arg(path, file.errorString()));
    const qint64 size = file.size();
    // The end-of-central-directory record: 22 bytes plus a comment of at most 65535.
    const qint64 tail = std::min<qint64>(size, 22 + 65535);
    if (!file.seek(size - tail))
        return fail(tr("Cannot read %1: %2.").arg(path, file.errorString()));
    const QByteArray end = file.read(tail);
    qint64 at = -1;
    for (qint64 i = end.size() - 22; i >= 0; --i) {
        if (u32(reinterpret_cast<const uchar *>(end.constData()) + i) == kEndOfCentralDirectory) {
            at = i;
            break;
        }
    }
    if (at < 0)
        return fail(tr("%1 is not a zip archive (no central directory).").arg(path));
    const uchar *e = reinterpret_cast<const uchar *>(end.constData()) + at;
    const quint16 entries = u16(e + 10);
    const quint32 dirSize = u32(e + 12), dirOffset = u32(e + 16);
    if (entries == 0xffff || dirSize == 0xffffffffu || dirOffset == 0xffffffffu)
        return fail(tr("%1 is a ZIP64 archive, which is not supported.").arg(path));
    if (qint64(dirOffset) + dirSize > size)
        return fail(tr("%1 is damaged: its central directory lies past the end of the file.").arg(path));
    if (!file.seek(dirOffset))
        return fail(tr("Cannot read %1: %2.").arg(path, file.errorString()));
    const QByteArray dir = file.read(dirSize);
    if (dir.size() != qint64(dirSize))
        return fail(tr("%1 is damaged: its central directory is cut short.").arg(path));
    const uchar *p = reinterpret_cast<const uchar *>(dir.constData());
    qint64 pos = 0;
    for (int i = 0; i < entries; ++i) {
        if (pos + 46 > dir.size() || u32(p + pos) != kCentralEntry)
            return fail(tr("%1 is damaged: entry %2 of its central directory is malformed.").arg(path).arg(i + 1));
        const uchar *c = p + pos;
        const int nameLength = u16(c + 28), extraLength = u16(c + 30), commentLength = u16(c + 32);
        if (pos + 46 + nameLength + extraLength + commentLength > dir.size())
            return fail(tr("%1 is damaged: entry %2 of its central directory is malformed.").arg(path).arg(i + 1));
        ZipMember m;
        m.encrypted = (u16(c + 8) & 1) != 0;
        m.method = u16(c + 10);
        m.crc32 = u32(c + 16);
        m.compressedSize = u32(c + 20);
        m.size = u32(c + 24);
        m.localHeaderOffset = u32(c + 42);
        m.name = QString::fromUtf8(reinterpret_cast<const char *>(c + 46), nameLength);
        if (m.compressedSize == 0xffffffffu || m.size == 0xffffffffu || m.localHeaderOffset == 0xffffffffu)
            return fail(tr("%1 is a ZIP64 archive, which is not supported.").arg(path));
        m_members.append(m);
        pos += 46 + nameLength + extraLength + commentLength;
    }
    return true;
}

const ZipMember *ZipArchive::findBySuffix(const QString &suffix) const
{
    for (const ZipMember &m : m_members)
        if (m.name.endsWith(suffix, Qt::CaseInsensitive))
            return &m;
    return nullptr;
}

bool ZipArchive::extract(const ZipMember &member, const QString &target,
                         const std::function<void(qint64, qint64)> &progress, std::stop_token stop)
{
    m_error.clear();
    m_cancelled = false;
    if (member.encrypted)
        return fail(tr("%1 in %2 is encrypted.").arg(member.name, m_path));
    if (member.method != 0 && member.method != 8)
        return fail(tr("%1 in %2 uses compression method %3; only stored and deflated members can be read.")
                        .arg(member.name, m_path)
                        .arg(member.method));
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly) || !file.seek(member.localHeaderOffset))
        return fail(tr("Cannot read %1: %2.").arg(m_path, file.errorString()));
    const QByteArray header = file.read(30);
    const uchar *h = reinterpret_cast<const uchar *>(header.constData());
    if (header.size() != 30 || u32(h) != kLocalHeader)
        return fail(tr("%1 is damaged: the local header of %2 is missing.").arg(m_path, member.name));
    const qint64 dataOffset = member.localHeaderOffset + 30 + u16(h + 26) + u16(h + 28);
    if (dataOffset + member.compressedSize > file.size())
        return fail(tr("%1 is damaged: %2 runs past the end of the file.").arg(m_path, member.name));
    if (!file.seek(dataOffset))
        return fail(tr("Cannot read %1: %2.").arg(m_path, file.errorString()));

    QSaveFile out(target);
    if (!out.open(QIODevice::WriteOnly))
        return fail(tr("Cannot write %1: %2.").arg(target, out.errorString()));
    auto writeAll = [&](const char *data, qint64 n) {
        if (out.write(data, n) == n)
            return true;
        return fail(tr("Cannot write %1: %2 (is the disk full?).").arg(target, out.errorString()));
    };

    Inflater inflater;
    if (member.method == 8 && !inflater.ready)
        return fail(tr("zlib could not be initialised."));
    std::vector<char> outBuffer(static_cast<size_t>(kChunk));
    uLong crc = crc32(0L, Z_NULL, 0);
    qint64 readTotal = 0, written = 0;
    bool ended = member.method == 0 && member.compressedSize == 0;
    while (readTotal < member.compressedSize) {
        if (stop.stop_requested()) {
            out.cancelWriting();
            m_cancelled = true;
            return fail(tr("Cancelled."));
        }
        const QByteArray in = file.read(std::min(kChunk, member.compressedSize - readTotal));
        if (in.isEmpty())
            return fail(tr("Cannot read %1: %2.").arg(m_path, file.errorString()));
        readTotal += in.size();
        if (member.method == 0) {
            crc = crc32(crc, reinterpret_cast<const Bytef *>(in.constData()), uInt(in.size()));
            if (!writeAll(in.constData(), in.size()))
                return false;
            written += in.size();
            ended = readTotal == member.compressedSize;
        } else {
            z_stream &zs = inflater.zs;
            zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.constData()));
            zs.avail_in = uInt(in.size());
            do {  // until the input is used up and zlib holds no more output
                zs.next_out = reinterpret_cast<Bytef *>(outBuffer.data());
                zs.avail_out = uInt(outBuffer.size());
                const int rc = inflate(&zs, Z_NO_FLUSH);
                if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
                    return fail(tr("%1 in %2 is damaged: %3.")
                                    .arg(member.name, m_path, QString::fromUtf8(zs.msg ? zs.msg : "inflate failed")));
                const qint64 produced = qint64(outBuffer.size()) - zs.avail_out;
                crc = crc32(crc, reinterpret_cast<const Bytef *>(outBuffer.data()), uInt(produced));
                if (produced > 0 && !writeAll(outBuffer.data(), produced))
                    return false;
                written += produced;
                if (written > member.size)
                    return fail(tr("%1 in %2 is damaged: it unpacks to more than its %3 bytes.")
                                    .arg(member.name, m_path)
                                    .arg(member.size));
                ended = rc == Z_STREAM_END;
                if (rc == Z_BUF_ERROR && produced == 0)
                    break;  // needs more input
            } while (!ended && (zs.avail_in > 0 || zs.avail_out == 0));
        }
        if (progress)
            progress(written, member.size);
    }
    if (!ended || written != member.size)
        return fail(tr("%1 in %2 is damaged: %3 of its %4 bytes could be unpacked.")
                        .arg(member.name, m_path)
                        .arg(written)
                        .arg(member.size));
    if (quint32(crc) != member.crc32)
        return fail(tr("%1 in %2 is damaged: its CRC-32 is %3, the archive lists %4.")
                        .arg(member.name, m_path)
                        .arg(quint32(crc), 8, 16, QLatin1Char('0'))
                        .arg(member.crc32, 8, 16, QLatin1Char('0')));
    if (!out.commit())
        return fail(tr("Cannot write %1: %2 (is the disk full?).").arg(target, out.errorString()));
    return true;
}

QString sha256OfFile(const QString &path, QString *error, const std::function<void(qint64, qint64)> &progress,
                     std::stop_token stop)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = QCoreApplication::translate("ZipArchive", "Cannot read %1: %2.").arg(path, file.errorString());
        return {};
    }
    QCryptographicHash hash(QCryptographicHash::Sha256);
    const qint64 total = file.size();
    qint64 done = 0;
    while (!file.atEnd()) {
        if (stop.stop_requested()) {
            if (error)
                error->clear();
            return {};
        }
        const QByteArray chunk = file.read(kChunk);
        if (chunk.isEmpty() && !file.atEnd()) {
            if (error)
                *error = QCoreApplication::translate("ZipArchive", "Cannot read %1: %2.").arg(path, file.errorString());
            return {};
        }
        hash.addData(chunk);
        done += chunk.size();
        if (progress)
            progress(done, total);
    }
    return QString::fromLatin1(hash.result().toHex());
}
