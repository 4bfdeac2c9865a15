#include "remoteendpointsmodel.h"

#include "services/remoteinferenceservice.h"

RemoteEndpointsModel::RemoteEndpointsModel(RemoteInferenceService *service, QString storePath, QObject *parent)
    : QAbstractListModel(parent)
    , m_service(service)
    , m_store(std::move(storePath))
    , m_endpoints(m_store.load())
{
    connect(service, &InferenceService::availableModelsChanged, this, &RemoteEndpointsModel::listErrorChanged);
    if (!m_endpoints.isEmpty())
        service->setEndpoints(m_endpoints);
}

int RemoteEndpointsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_endpoints.size());
}

QVariant RemoteEndpointsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const RemoteEndpoint &e = m_endpoints.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case NameRole: return e.name;
    case UrlRole: return e.baseUrl.toString();
    case NoteRole: return RemoteEndpointRules::noteFor(e.baseUrl);
    case HasKeyRole: return !e.apiKey.isEmpty();
    default: return {};
    }
}

QHash<int, QByteArray> RemoteEndpointsModel::roleNames() const
{
    return {{NameRole, "name"}, {UrlRole, "url"}, {NoteRole, "note"}, {HasKeyRole, "hasKey"}};
}

QString RemoteEndpointsModel::add(const QString &name, const QString &url, const QString &apiKey)
{
    const QString trimmedName = name.trimmed();
    if (trimmedName.isEmpty())
        return tr("Give the endpoint a name.");
    for (const RemoteEndpoint &e : m_endpoints) {
        if (e.name == trimmedName)
            return tr("An endpoint named %1 exists already.").arg(trimmedName);
    }
    const EndpointAddress address = RemoteEndpointRules::check(url);
    if (!address.error.isEmpty())
        return address.error;
    beginInsertRows({}, int(m_endpoints.size()), int(m_endpoints.size()));
    m_endpoints.append({trimmedName, address.baseUrl, apiKey.trimmed()});
    endInsertRows();
    if (!saveAndApply())
        return tr("The endpoint is used but could not be saved: %1").arg(m_store.lastError());
    return {};
}

void RemoteEndpointsModel::remove(int row)
{
    if (row < 0 || row >= m_endpoints.size())
        return;
    beginRemoveRows({}, row, row);
    m_endpoints.removeAt(row);
    endRemoveRows();
    saveAndApply();
}

QString RemoteEndpointsModel::check(const QString &url) const
{
    const EndpointAddress address = RemoteEndpointRules::check(url);
    return address.error.isEmpty() ? address.note : address.error;
}

QString RemoteEndpointsModel::listError() const
{
    return m_service ? m_service->listError() : QString();
}

bool RemoteEndpointsModel::saveAndApply()
{
    if (m_service)
        m_service->setEndpoints(m_endpoints);
    return m_store.save(m_endpoints);
}
