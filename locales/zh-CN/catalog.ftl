# 后台功能页面：API 密钥、操作日志、券码、商品、对账、不可售、库存。按页面加前缀。

## API 密钥

apikey-intro-call = 订单系统调用
apikey-intro-with = 时，请在请求头中带上
apikey-intro-merchant-only = 。每个密钥只能代表本商户操作。
apikey-copy-now = 请立即复制此密钥。
apikey-shown-once = 它只显示这一次；我们只保存它的哈希值。
apikey-name-example = 订单系统（正式环境）
apikey-create = 创建密钥
apikey-none = 还没有 API 密钥。
apikey-starts-with = 密钥开头
apikey-created = 创建时间
apikey-by = 创建人
apikey-last-used = 最近使用
apikey-never-used = 从未使用
apikey-revoke = 吊销
apikey-revoked-at = 已于 { $at } 吊销
apikey-revoke-title = 吊销 API 密钥
apikey-revoke-question = 确定吊销 API 密钥“{ $name }”吗？
apikey-revoke-systems = 使用以
apikey-revoke-explain = 开头的密钥的系统，下次调用时将收到 401 错误。此操作无法撤销；如需恢复访问，请创建新的密钥。
apikey-revoke-the-key = 吊销密钥
apikey-keep = 保留

## 共用标点（同 `colon`）：链接之后结束句子。

full-stop = 。

## 操作日志

audit-intro-all = 所有商户数据的每一次改动：谁改的、何时改的、来自哪个页面或 API 调用。
audit-intro-own = 您的数据的每一次改动：谁改的、何时改的、来自哪个页面或 API 调用。
audit-all = 全部
audit-who = 操作人
audit-who-example = 例如 apikey
audit-action = 操作
audit-subject = 对象
audit-subject-example = 例如 sku:TEA-1
audit-from-date = 开始日期
audit-to-date = 结束日期
audit-clear = 清除筛选
audit-n-entries = 共 { $n } 条记录。
audit-n-entries-match = 符合筛选条件的记录共 { $n } 条。
audit-more-than = 记录超过 { $max } 条。
audit-more-than-match = 符合筛选条件的记录超过 { $max } 条。
audit-times-in = 时间按 { $tz }。
audit-export-newest = 导出只包含最新的 { $max } 条；缩小日期范围可导出其余记录。
audit-export-at-most = 导出最多包含 { $max } 条记录。
audit-export-csv = 导出 CSV
audit-none-yet = 还没有任何改动记录。
audit-no-more = 这里没有更多记录了。
audit-back-to-newest = 返回最新记录
audit-none-match = 没有符合筛选条件的记录。
audit-time = 时间
audit-detail = 详情
audit-source = 来源
audit-address = IP 地址
audit-newest = 最新
audit-newer = 较新
audit-older = 较早
