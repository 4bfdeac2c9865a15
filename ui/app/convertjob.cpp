#include "app/convertjob.h"

#include <QDir>
#include <QFileInfo>
#include <QUrl>
#include <algorithm>
#include <cmath>
#include <exception>

#include "exl/convert.h"
#include "exl/error.h"

namespace {

QString localPath(const QString &pathOrUrl)
{
    const QString trimmed = pathOrUrl.trimmed();
    if (trimmed.isEmpty())
        return {};
    const QUrl url(trimmed);
    return QDir::cleanPath(url.isLocalFile() ? url.toLocalFile() : trimmed);
}

// The converter's stages: their share of the whole conversion (measured on the H200 and the CPU:
// the measurement dominates a measured conversion, the quantization a --fast one) and their names.
struct Stage {
    const char *name;
    double measured, fast;
    const char *label;
};
constexpr Stage kStages[] = {
    {"device", 0.0, 0.0, QT_TRANSLATE_NOOP("ConvertJob", "Choosing the device")},
    {"calibration", 0.02, 0.03, QT_TRANSLATE_NOOP("ConvertJob", "Reading the calibration text")},
    {"measure", 0.58, 0.0, QT_TRANSLATE_NOOP("ConvertJob", "Measuring every layer")},
    {"optimize", 0.01, 0.01, QT_TRANSLATE_NOOP("ConvertJob", "Choosing the bits per layer")},
    {"quantize", 0.37, 0.93, QT_TRANSLATE_NOOP("ConvertJob", "Quantizing")},
    {"write", 0.02, 0.03, QT_TRANSLATE_NOOP("ConvertJob", "Writing the model")},
    {"done", 0.0, 0.0, QT_TRANSLATE_NOOP("ConvertJob", "Done")},
};


}  // namespace

ConvertJob::ConvertJob(QObject *parent) : QObject(parent) {}

ConvertJob::~ConvertJob()
{
    if (m_worker) {
        m_worker->request_stop();
        m_worker->join();
    }
}

void ConvertJob::setInput(const QString &pathOrUrl)
{
    const QString path = localPath(pathOrUrl);
    if (path == m_input)
        return;
    m_input = path;
    settingsEdited();
}

void ConvertJob::setOutput(const QString &pathOrUrl)
{
    const QString path = localPath(pathOrUrl);
    if (path == m_output)
        return;
    m_output = path;
    settingsEdited();
}

namespace {
constexpr int kExl2HeadBits[] = {2, 3, 4, 5, 6, 8};
constexpr int kExl3HeadBits[] = {1, 2, 3, 4, 5, 6, 7, 8, 16};  // 16: the head kept in FP16
constexpr int kDefaultHeadBits = 6;                            // both converters' default
template <std::size_t N>
bool oneOf(const int (&choices)[N], int v)
{
    return std::find(std::begin(choices), std::end(choices), v) != std::end(choices);
}
}  // namespace

void ConvertJob::setFormat(const QString &format)
{
    if (format != QLatin1String("exl2") && format != QLatin1String("exl3"))
        return;
    const bool exl3 = format == QLatin1String("exl3");
    if (exl3 == m_exl3)
        return;
    m_exl3 = exl3;
    // The bits and head bits follow the format's ranges.
    m_bits = std::round(std::clamp(m_bits, minBits(), maxBits()) * 100.0) / 100.0;
    if (!(m_exl3 ? oneOf(kExl3HeadBits, m_headBits) : oneOf(kExl2HeadBits, m_headBits)))
        m_headBits = kDefaultHeadBits;
    Q_EMIT formatChanged();
    settingsEdited();
}

void ConvertJob::setBits(double bits)
{
    bits = std::round(std::clamp(bits, minBits(), maxBits()) * 100.0) / 100.0;
    if (bits == m_bits)
        return;
    m_bits = bits;
    settingsEdited();
}

void ConvertJob::setHeadBits(int bits)
{
    if (!(m_exl3 ? oneOf(kExl3HeadBits, bits) : oneOf(kExl2HeadBits, bits)) || bits == m_headBits)
        return;
    m_headBits = bits;
    settingsEdited();
}

QVariantList ConvertJob::headBitsChoices() const
{
    QVariantList out;
    if (m_exl3)
        for (const int b : kExl3HeadBits)
            out.append(b);
    else
        for (const int b : kExl2HeadBits)
            out.append(b);
    return out;
}

void ConvertJob::setFast(bool fast)
{
    if (fast == m_fast)
        return;
    m_fast = fast;
    settingsEdited();
}

void ConvertJob::setDevice(const QString &device)
{
    const QString d = device == QLatin1String("cpu") || device == QLatin1String("cuda") ? device : QStringLiteral("auto");
    if (d == m_device)
        return;
    m_device = d;
    settingsEdited();
}

void ConvertJob::settingsEdited()
{
    Q_EMIT settingsChanged();
    // The last run's outcome belongs to its settings: once they change it would mislead.
    if (!m_running && (m_succeeded || !m_error.isEmpty())) {
        m_succeeded = false;
        m_error.clear();
        m_resultText.clear();
        Q_EMIT stateChanged();
    }
}

QString ConvertJob::formatDuration(double seconds)
{
    const qint64 s = qint64(std::llround(seconds));
    if (s >= 3600)
        return tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
    if (s >= 60)
        return tr("%1 min %2 s").arg(s / 60).arg(s % 60);
    return tr("%1 s").arg(s);
}

QString ConvertJob::settingsError() const
{
    if (m_input.isEmpty())
        return tr("Choose the model to convert: an HF model folder or a .gguf file.");
    const QFileInfo in(m_input);
    if (!in.exists())
        return tr("%1 does not exist.").arg(m_input);
    if (in.isFile() && !m_input.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive))
        return tr("%1 is neither a model folder nor a .gguf file.").arg(m_input);
    if (m_output.isEmpty())
        return tr("Choose the output folder.");
    const QFileInfo out(m_output);
    const QStringList entries = out.isDir() ? QDir(m_output).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)
                                            : QStringList();
    // An interrupted conversion's state (.exl-resume) is no obstacle: start() continues it.
    if (out.exists() && (!out.isDir() || !(entries.isEmpty() || (resumable() && entries.size() == 1))))
        return tr("The output folder %1 is not empty.").arg(m_output);
    if (QDir::cleanPath(in.absoluteFilePath()) == QDir::cleanPath(out.absoluteFilePath()))
        return tr("The output folder must differ from the input.");
    if (m_exl3 && m_device == QLatin1String("cuda"))
        return tr("EXL3 conversion runs on the CPU for now: choose Automatic or CPU as the device.");
    return {};
}

bool ConvertJob::resumable() const
{
    return !m_output.isEmpty() && exl::has_conversion_state(m_output.toStdString());
}

double ConvertJob::overallProgress(const QString &stage, int step, int steps, bool fast)
{
    double before = 0.0;
    for (const Stage &s : kStages) {
        const double w = fast ? s.fast : s.measured;
        if (stage == QLatin1String(s.name)) {
            if (stage == QLatin1String("done"))
                return 1.0;
            const double within = steps > 0 ? std::clamp(double(step) / double(steps), 0.0, 1.0) : 0.0;
            return std::clamp(before + w * within, 0.0, 1.0);
        }
        before += w;
    }
    return 0.0;
}

QString ConvertJob::stageName(const QString &stage)
{
    for (const Stage &s : kStages)
        if (stage == QLatin1String(s.name))
            return tr(s.label);
    return stage;
}

exl::ConvertOptions ConvertJob::convertOptions() const
{
    exl::ConvertOptions o;
    o.format = m_exl3 ? exl::ConvertFormat::exl3 : exl::ConvertFormat::exl2;
    o.input_dir = m_input.toStdString();
    o.output_dir = m_output.toStdString();
    o.bits = m_bits;
    o.head_bits = m_headBits;
    o.rows = calibrationRows();
    o.length = calibrationLength();
    o.fast = !m_exl3 && m_fast;  // EXL3 conversion has no measurement pass to skip
    o.device = m_device.toStdString();
    o.resume = resumable();
    return o;
}

bool ConvertJob::start()
{
    if (m_running) {
        m_error = tr("A conversion is already running.");
        Q_EMIT stateChanged();
        return false;
    }
    if (const QString why = settingsError(); !why.isEmpty()) {
        m_error = why;
        m_succeeded = false;
        Q_EMIT stateChanged();
        return false;
    }
    if (m_worker) {  // the previous run has ended (onDone ran): reap it
        m_worker->join();
        m_worker.reset();
    }
    const exl::ConvertOptions o = convertOptions();
    m_runFast = o.format == exl::ConvertFormat::exl3 || o.fast;  // no measurement stage
    m_running = true;
    m_succeeded = false;
    m_error.clear();
    m_resultText.clear();
    m_outputFolder.clear();
    m_progress = 0.0;
    m_stage = stageName(QStringLiteral("device"));
    m_message.clear();
    m_eta.clear();
    m_clock.start();
    Q_EMIT stateChanged();
    Q_EMIT progressChanged();
    // The worker reports through queued calls on this object (dropped if it is gone; the
    // destructor stops and joins the worker first anyway).
    m_worker = std::make_unique<std::jthread>([this, o](std::stop_token stop) {
        auto progress = [this](const exl::ConvertProgress &p) {
            const QString stage = QString::fromStdString(p.stage), message = QString::fromStdString(p.message);
            const int step = p.step, steps = p.steps;
            QMetaObject::invokeMethod(
                this, [this, stage, step, steps, message] { onProgress(stage, step, steps, message); },
                Qt::QueuedConnection);
        };
        bool ok = false;
        QString error, summary;
        try {
            const exl::ConvertResult r = exl::convert_model(o, progress, stop);
            ok = true;
            summary = tr("Decoder %1 bpw, head %2 bpw, %3 files.")
                          .arg(r.decoder_bpw, 0, 'f', 3)
                          .arg(r.head_bpw, 0, 'f', 2)
                          .arg(r.files.size());
        } catch (const exl::Error &e) {
            if (e.kind() != exl::ErrorKind::cancelled)
                error = QString::fromUtf8(e.what());
            else if (exl::has_conversion_state(o.output_dir))
                error = tr("Cancelled. The finished layers are kept in the output folder: Convert continues from there.");
            else
                error = tr("Cancelled before any layer was finished: nothing was kept.");
        } catch (const std::exception &e) {
            error = QString::fromUtf8(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, ok, error, summary] { onDone(ok, error, summary); }, Qt::QueuedConnection);
    });
    return true;
}

void ConvertJob::cancel()
{
    if (m_worker && m_running)
        m_worker->request_stop();
}

void ConvertJob::onProgress(const QString &stage, int step, int steps, const QString &message)
{
    if (!m_running)
        return;
    m_progress = std::max(m_progress, overallProgress(stage, step, steps, m_runFast));
    m_stage = stageName(stage);
    m_message = message;
    const double elapsed = m_clock.elapsed() / 1000.0;
    // An estimate once a few percent are done (the first steps include loading the model).
    m_eta = m_progress >= 0.03 && m_progress < 1.0 ? formatDuration(elapsed * (1.0 - m_progress) / m_progress) : QString();
    Q_EMIT progressChanged();
}

void ConvertJob::onDone(bool ok, const QString &error, const QString &summary)
{
    m_running = false;
    m_succeeded = ok;
    m_error = error;
    if (ok) {
        m_progress = 1.0;
        m_stage = stageName(QStringLiteral("done"));
        m_eta.clear();
        m_outputFolder = m_output;
        m_resultText = tr("%1 (in %2).").arg(summary.chopped(1), formatDuration(m_clock.elapsed() / 1000.0));
    }
    Q_EMIT progressChanged();
    Q_EMIT stateChanged();
    Q_EMIT finished(ok, m_outputFolder);
}
