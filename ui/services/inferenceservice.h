// The GUI's view of the inference engine. Implementations run the engine on one inference
// thread; every signal carries value types and is delivered queued on the GUI thread.
#pragma once
#include <QObject>

#include "inferencetypes.h"

class InferenceService : public QObject
{
    Q_OBJECT
public:
    using QObject::QObject;
    ~InferenceService() override = default;

    // Folders with models the user can load (name, bpw, size, ...).
    virtual QList<ModelInfo> availableModels() const = 0;
    // "cpu" or "cuda:N": where the engine runs.
    virtual QString deviceName() const = 0;
    bool onCpu() const { return deviceName() == QLatin1String("cpu"); }
    // Why the engine runs where it runs (e.g. why no GPU is used); may be empty.
    virtual QString deviceNote() const { return {}; }

    // Loads asynchronously; loadFinished() reports the outcome (failures leave no model loaded).
    virtual void loadModel(const QString &path, const LoadOptions &options) = 0;
    virtual void unloadModel() = 0;
    // Starts generating a reply to `conversation`; returns the request id carried by every
    // tokensArrived() and generationFinished() of this request.
    virtual quint64 generate(const QList<ChatTurn> &conversation, const SamplingSettings &settings) = 0;
    // Stops `requestId` at the next engine step. Safe to call for finished requests.
    virtual void cancel(quint64 requestId) = 0;

Q_SIGNALS:
    void tokensArrived(const TokenBatch &batch);
    void generationFinished(const GenerationStats &stats);
    void error(quint64 requestId, const QString &message);
    void telemetry(const TelemetrySample &sample);
    void loadProgress(double fraction);
    void loadFinished(const LoadResult &result);
    void modelLoaded(const ModelInfo &info);
    void modelUnloaded();
    // availableModels() changed (e.g. a remote endpoint's list arrived).
    void availableModelsChanged();
};
