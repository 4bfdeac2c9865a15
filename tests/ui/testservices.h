// The InferenceService the view-model tests run against. Built plainly: the local service
// (the real worker thread around the scripted FakeGenerationBackend). Built with
// EXL_TEST_REMOTE_SERVICE: the RemoteInferenceService talking to a loopback
// FakeOpenAiServer that streams the same scripted replies with the same pacing. The test
// bodies are the same for both.
#pragma once
#include <memory>

#include "services/fakeinferenceservice.h"
#ifdef EXL_TEST_REMOTE_SERVICE
#include "fakeopenaiserver.h"
#include "services/remoteinferenceservice.h"

// The remote service with its loopback server; local model paths name the server's models.
class LoopbackRemoteService : public RemoteInferenceService
{
public:
    explicit LoopbackRemoteService(std::unique_ptr<FakeOpenAiServer> server)
        : RemoteInferenceService({{QStringLiteral("loopback"), QUrl(server->baseUrl()), {}}}, RemoteOptions{10000})
        , m_server(std::move(server))
    {
    }
    void loadModel(const QString &path, const LoadOptions &options) override
    {
        RemoteInferenceService::loadModel(isRemotePath(path) ? path : modelPath(endpoints().constFirst(), path),
                                          options);
    }
    FakeOpenAiServer *server() const { return m_server.get(); }

private:
    std::unique_ptr<FakeOpenAiServer> m_server;
};
#endif

inline std::unique_ptr<InferenceService> makeTestService(const QString &deviceName, FakeTiming timing)
{
#ifdef EXL_TEST_REMOTE_SERVICE
    Q_UNUSED(deviceName);
    auto server = std::make_unique<FakeOpenAiServer>(timing);
    if (!server->listen())
        return nullptr;
    return std::make_unique<LoopbackRemoteService>(std::move(server));
#else
    return std::make_unique<FakeInferenceService>(deviceName, timing);
#endif
}
