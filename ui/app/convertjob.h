// The convert dialog's job: exl::convert_model (HF folder or GGUF file to EXL3 or EXL2 at a target
// bpw) on a worker thread, its progress as properties (stage, fraction, ETA, the converter's last line),
// cancel through the converter's stop token, and the outcome (the output folder, or the error).
// A finished conversion's folder can be added to the model list (ModelManager::addFolder).
#pragma once
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <thread>

namespace exl {
struct ConvertOptions;
}

class ConvertJob : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    // Input: an HF model folder (FP16/BF16/FP32 safetensors) or a .gguf file; output: a new folder.
    // Paths or file:// URLs.
    Q_PROPERTY(QString input READ input WRITE setInput NOTIFY settingsChanged)
    Q_PROPERTY(QString output READ output WRITE setOutput NOTIFY settingsChanged)
    // "exl3" (ExLlamaV3's format, what new quants use: the default) or "exl2". The ranges, choices
    // and defaults below follow it; a switch clamps the bits and resets head bits the format lacks.
    Q_PROPERTY(QString format READ format WRITE setFormat NOTIFY formatChanged)
    // Target bpw of the decoder layers: EXL3 1.0 .. 8.0, EXL2 2.0 .. 8.5.
    Q_PROPERTY(double bits READ bits WRITE setBits NOTIFY settingsChanged)
    Q_PROPERTY(double minBits READ minBits NOTIFY formatChanged)
    Q_PROPERTY(double maxBits READ maxBits NOTIFY formatChanged)
    // EXL3: 1 .. 8 or 16 (the head kept in FP16); EXL2: 2, 3, 4, 5, 6, 8.
    Q_PROPERTY(int headBits READ headBits WRITE setHeadBits NOTIFY settingsChanged)
    Q_PROPERTY(QVariantList headBitsChoices READ headBitsChoices NOTIFY formatChanged)
    // The calibration the format's converter uses (rows x tokens per row): EXL3 250 x 2048
    // (ExLlamaV3's), EXL2 8 x 512.
    Q_PROPERTY(int calibrationRows READ calibrationRows NOTIFY formatChanged)
    Q_PROPERTY(int calibrationLength READ calibrationLength NOTIFY formatChanged)
    // EXL2 only (EXL3 conversion is one pass): `fast` is kept but not applied for EXL3.
    Q_PROPERTY(bool measurementOptions READ measurementOptions NOTIFY formatChanged)
    Q_PROPERTY(bool fast READ fast WRITE setFast NOTIFY settingsChanged)
    // "auto" (the GPU when usable), "cpu" or "cuda". EXL3 conversion runs on the CPU for now: "auto"
    // means the CPU there, and "cuda" is refused (settingsError).
    Q_PROPERTY(QString device READ device WRITE setDevice NOTIFY settingsChanged)
    Q_PROPERTY(QString settingsError READ settingsError NOTIFY settingsChanged)
    // The output folder holds an interrupted conversion's state: start() continues it.
    Q_PROPERTY(bool resumable READ resumable NOTIFY stateChanged)
    Q_PROPERTY(bool running READ running NOTIFY stateChanged)
    Q_PROPERTY(bool succeeded READ succeeded NOTIFY stateChanged)
    Q_PROPERTY(QString error READ error NOTIFY stateChanged)
    Q_PROPERTY(QString resultText READ resultText NOTIFY stateChanged)
    Q_PROPERTY(QString outputFolder READ outputFolder NOTIFY stateChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
    Q_PROPERTY(QString stage READ stage NOTIFY progressChanged)
    Q_PROPERTY(QString message READ message NOTIFY progressChanged)
    Q_PROPERTY(QString eta READ eta NOTIFY progressChanged)
public:
    explicit ConvertJob(QObject *parent = nullptr);
    ~ConvertJob() override;  // cancels and waits for a running conversion

    QString input() const { return m_input; }
    void setInput(const QString &pathOrUrl);
    QString output() const { return m_output; }
    void setOutput(const QString &pathOrUrl);
    QString format() const { return m_exl3 ? QStringLiteral("exl3") : QStringLiteral("exl2"); }
    void setFormat(const QString &format);  // anything but "exl2" / "exl3" is ignored
    double bits() const { return m_bits; }
    void setBits(double bits);
    double minBits() const { return m_exl3 ? 1.0 : 2.0; }
    double maxBits() const { return m_exl3 ? 8.0 : 8.5; }
    int headBits() const { return m_headBits; }
    void setHeadBits(int bits);  // one of headBitsChoices, else ignored
    QVariantList headBitsChoices() const;
    int calibrationRows() const { return m_exl3 ? 250 : 8; }
    int calibrationLength() const { return m_exl3 ? 2048 : 512; }
    bool measurementOptions() const { return !m_exl3; }
    bool fast() const { return m_fast; }
    void setFast(bool fast);
    QString device() const { return m_device; }
    void setDevice(const QString &device);
    // Why start() would refuse the current settings (empty: it would start).
    QString settingsError() const;
    bool resumable() const;
    // The converter's options for the current settings, as start() hands them over.
    exl::ConvertOptions convertOptions() const;

    bool running() const { return m_running; }
    bool succeeded() const { return m_succeeded; }
    QString error() const { return m_error; }
    QString resultText() const { return m_resultText; }
    QString outputFolder() const { return m_outputFolder; }
    double progress() const { return m_progress; }
    QString stage() const { return m_stage; }
    QString message() const { return m_message; }
    QString eta() const { return m_eta; }

    // Starts the conversion (false, with `error` set, when the settings are incomplete or one is
    // running); cancel() asks it to stop at the next block and returns at once.
    Q_INVOKABLE bool start();
    Q_INVOKABLE void cancel();

    // Overall fraction done from the converter's stage and step (stages weighted by their usual
    // share of the time; `fast`: no measurement stage, as in an EXL3 conversion). Exposed for the tests.
    static double overallProgress(const QString &stage, int step, int steps, bool fast);
    // The converter's English stage name, translated.
    static QString stageName(const QString &stage);
    // A time left or taken, as the progress lines show it ("3 min 20 s").
    static QString formatDuration(double seconds);

Q_SIGNALS:
    void settingsChanged();
    void formatChanged();  // with settingsChanged
    void stateChanged();
    void progressChanged();
    // The conversion ended: ok with the finished folder, or not (error() says why; cancelled too).
    void finished(bool ok, const QString &outputFolder);

private:
    // A setting changed: tell the view, and drop the last run's outcome (it was for other settings).
    void settingsEdited();
    void onProgress(const QString &stage, int step, int steps, const QString &message);
    void onDone(bool ok, const QString &error, const QString &summary);

    QString m_input, m_output, m_device = QStringLiteral("auto");
    bool m_exl3 = true;
    double m_bits = 4.0;
    int m_headBits = 6;
    bool m_fast = false;
    bool m_runFast = false;  // the running conversion has no measurement stage (progress weights)
    bool m_running = false, m_succeeded = false;
    QString m_error, m_resultText, m_outputFolder, m_stage, m_message, m_eta;
    double m_progress = 0.0;
    QElapsedTimer m_clock;
    // Last member: destroyed (stop requested, joined) before the others.
    std::unique_ptr<std::jthread> m_worker;
};
