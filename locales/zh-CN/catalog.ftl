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
audit-times-in = 时间均为{ $tz }。
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

## 券码（卡券与卡密）

codes-status = { $status ->
    [AVAILABLE] 可用
    [BOOKING] 订单占用
    [SOLD] 已售
    [LOCKED] 已锁定
    [EXPIRED] 已过期
    [INVALID] 已作废
    [VOIDED] 售后作废
    [REDEEMED] 已核销
    [PENDING] 导入中
   *[other] { $status }
}
codes-batch-status = { $status ->
    [CREATING] 处理中
    [READY] 已完成
    [PARTIAL] 部分导入
    [FAILED] 失败
   *[other] { $status }
}
codes-of = 券码：
codes-intro = 卡券与卡密：每个券码一行，每个只售一次。
codes-lookup-link = 查询顾客报出的券码
codes-no-skus = 还没有卡券类 SKU。券码按卡券类商品的 SKU 销售。
codes-no-skus-lead = 还没有卡券类 SKU。券码按卡券类商品的 SKU 销售：请先
codes-no-skus-create = 创建卡券类商品
codes-no-skus-tail = 。
codes-voucher-sku = 卡券 SKU
codes-choose-sku = 选择卡券 SKU
codes-product-link = 商品
codes-by-status = 各状态券码数
codes-sellable-now = 当前可售（可用且未过期）
codes-batches = 批次
codes-no-batches = 还没有批次。
codes-no-batches-admin = 还没有批次：请在下方上传文件或生成券码。
codes-batch = 批次
codes-source = 来源
codes-read = 读取
codes-imported = 已导入
codes-rejected = 被拒绝
codes-created = 创建时间
codes-by = 创建人
codes-source-generated = 生成
codes-source-upload = 上传
codes-upload-title = 上传券码
codes-upload-a = 上传
codes-upload-txt = 文件（每行一个券码），或
codes-upload-csv = 文件（表头须有
codes-upload-column = 列，可另加
codes-upload-limits = 列）。最多 { $lines } 行、{ $mb } MB。导入在后台进行；完成后，这批券码同时开售。
codes-file = 文件
codes-when-bad = 部分行有误时
codes-mode = 导入方式
codes-mode-valid = 导入有效的行
codes-mode-all = 全部成功才导入
codes-name-optional = 名称（选填）
codes-name-placeholder = 文件名
codes-expiry-optional = 过期时间（选填，{ $tz }）
codes-upload = 上传
codes-generate-title = 生成券码
codes-generate-explain = 随机生成、无法猜到的券码，与上传的券码一样保存。可以在批次页面以文件形式下载一次；之后只能逐个显示。
codes-how-many = 数量（1–{ $max }）
codes-length = 长度（10–32）
codes-alphabet = 字符
codes-alphabet-unambiguous = 字母和数字，不含易混字符
codes-alphabet-digits = 纯数字
codes-alphabet-letters = 纯字母，不含易混字符
codes-generate = 生成
codes-operator-choose-sku = 请在上方选择一个商户的卡券 SKU，查看其券码和批次。
codes-choose-sku-above = 请在上方选择卡券 SKU，查看其券码和批次。

codes-batch-n = 批次 #{ $id }
codes-batch-title = 批次 #{ $id }：{ $name }
codes-generated-by = 由 { $who } 于 { $at } 生成
codes-uploaded-by = 由 { $who } 于 { $at } 上传
codes-generating = 正在生成…
codes-importing = 正在导入…
codes-creating-explain = 完成之前，此批次的券码都不会开售；完成后同时开售。本页面会自动更新。
codes-refresh = 刷新
codes-lines-read = 已读取行数
codes-finished = 完成时间
codes-outcome-ready = 所有行均已导入：{ $n } 个券码已开售。
codes-outcome-partial = 已导入 { $imported } 个券码并开售；{ $rejected } 行被拒绝（见下方列表）。
codes-outcome-failed = 导入失败：其中的券码均未开售。
codes-download-title = 下载券码
codes-download-explain = 这些券码由您生成。可以下载一次，格式为每行一个券码的文本文件；之后只能逐个显示。
codes-download = 下载券码
codes-downloaded-at = 券码已于 { $at } 下载。
codes-every-code = 此批次的全部券码
codes-lock-available = 锁定可用的券码
codes-unlock-locked = 解锁已锁定的券码
codes-invalidate-batch-confirm = 确定作废批次 #{ $id } 中所有“可用”的券码吗？作废的券码永远不会售出，此操作无法撤销。
codes-invalidate-available-link = 作废可用的券码…
codes-moves-explain = 只有“可用”的券码会被锁定或作废，只有“已锁定”的券码会被解锁。订单占用的券码和已售券码不会变动。
codes-import-errors = 导入错误
codes-no-line-rejected = 没有被拒绝的行。
codes-errors-csv = 以 CSV 下载全部错误
codes-error-pages = 错误分页
codes-prev-errors = 上一页错误
codes-more-errors = 更多错误
codes-nothing-imported = 此批次没有导入任何券码。
codes-allowed = 允许的字符
codes-allowed-explain = 含其他字符的券码会被拒绝，并注明行号。空格一律不计：每个券码中的空格都会被去掉。
codes-blank-lines = 跳过的空行
codes-normalised = { $n } 个券码去掉了输入时带的空格后保存，所在行：
list-comma = {"、"}
codes-search = 券码或订单号
codes-search-placeholder = 顾客念出的券码，或订单号
codes-clear-filter = 显示全部券码
codes-none-match = 此批次没有符合条件的券码。按完整券码查找（空格与大小写不限），或按占用它的订单号查找。
codes-of-all = 本批次共 { $n } 个
codes-batch-empty = 此批次没有券码。
codes-listed = 列表中不显示券码内容。
codes-listed-reveal = 列表中不显示券码内容。需要时可逐个显示：每次显示都会记录。
codes-code = 券码
codes-line = 行号
codes-order = 订单
codes-expires = 过期时间
codes-lock = 锁定
codes-unlock = 解锁
codes-invalidate-code-confirm = 确定作废券码 #{ $id } 吗？它将永远不会售出，此操作无法撤销。
codes-invalidate-link = 作废…
codes-reveal = 显示
codes-n-codes = 共 { $n } 个券码

codes-invalidate-code-title = 作废券码 #{ $id }
codes-invalidate-batch-title = 作废批次 #{ $id }
codes-back-to-batch = 返回批次 #{ $id }：{ $name }
codes-invalidate-code-question = 确定作废券码 #{ $id } 吗？
codes-line-of-batch = 批次 #{ $batch }（{ $name }）第 { $line } 行
codes-invalid-never-sold = 作废的券码永远不会售出。此操作无法撤销。
codes-invalidate-the-code = 作废券码
codes-keep-it = 保留
codes-only-available = 只有“可用”的券码可以作废；此券码当前为“{ $status }”。
codes-invalidate-batch-question = 确定作废批次 #{ $id } 吗？
codes-none-available = 此批次没有“可用”的券码：无需作废。
codes-invalidate-batch-what = { $n } 个“可用”的券码将变为“已作废”，永远不会售出。订单占用、已售、已锁定或已过期的券码保持不变。此操作无法撤销。
codes-invalidate-available = 作废可用的券码
codes-keep-them = 保留

codes-download-page-title = 下载 · 批次 #{ $id }
codes-download-question = 确定下载批次 #{ $id } 的券码吗？
codes-still-generating = 券码仍在生成中。请在批次完成后再来。
codes-already-downloaded = 这些券码已于 { $at } 下载。如需单个券码，请在批次页面逐个显示。
codes-download-n-of = 共 { $n } 个券码（SKU
codes-download-once = ），每行一个，保存为文本文件。文件只能下载一次：请妥善保管。之后只能逐个显示券码。
codes-not-now = 暂不下载

codes-lookup-title = 查询券码
codes-lookup-explain = 输入顾客报出的券码。空格一律不计（导入时也会去掉空格），连字符要输入；按原样或大写查找。券码不会被保存、记录或放进网址。
codes-history-and-actions = 查看记录与操作

codes-choose-merchant = 选择商户
codes-lookup = 查询
codes-code-n = 券码 #{ $id }
codes-sku = SKU
codes-no-such-code = 没有这个券码。

codes-line-n = 第 { $line } 行
codes-order-n = 订单 { $order }
codes-shown-once = 仅显示一次；本次显示已记录
codes-reveal-not-kept = 浏览器不会保留此页面：如有需要，请立即复制券码。之后可在批次页面再次显示。
codes-back-to-batch-n = 返回批次 #{ $id }

## 商品

prod-kind = { $kind ->
    [goods] 实物
    [voucher] 卡券
    [service] 服务
   *[other] { $kind }
}
prod-new = 新建商品
prod-search = 搜索
prod-search-placeholder = 名称或 SKU 编码
prod-sellable-now = 当前可售
prod-more-skus = 另有 { $n } 个 SKU
prod-any = 不限
prod-all = 全部
prod-none = 还没有商品。
prod-create-first = 创建第一个商品
prod-none-match = 没有符合筛选条件的商品。
prod-skus = SKU
prod-sale-window = 销售时间
prod-n-products = 共 { $n } 个商品
prod-sale-phase = { $phase ->
    [ended] 已过销售期
   *[not_started] 未到销售期
}
prod-prev = 上一页
prod-next = 下一页
prod-check-fields = 请检查下方标出的字段。
prod-legend-product = 商品
prod-kind-goods-explain = 实物 — 按库存计
prod-kind-voucher-explain = 卡券 — 以唯一券码销售
prod-kind-service-explain = 服务 — 按时段预约
prod-sale-starts = 开售时间（{ $tz }）
prod-sale-ends = 停售时间（{ $tz }）
prod-first-sku = 第一个 SKU
prod-sku-code-example = TEA-JAS-100
prod-sku-name-example = 100 克罐装
prod-price = 价格（{ $currency }）
prod-create = 创建商品
prod-cancel = 取消
prod-sale-window-tz = 销售时间（{ $tz }）
prod-put-online = 上架
prod-offline-confirm = 确定下架“{ $name }”吗？顾客将看不到它。
prod-take-offline = 下架
prod-back-to-draft = 改回草稿
prod-code = 编码
prod-counted-as = 计量方式
prod-unit-stock = 库存
prod-unit-codes = 券码
prod-unit-slots = 时段
prod-edit = 编辑
prod-link-stock = 库存
prod-link-schedule = 排班
prod-link-codes = 券码
prod-add-sku = 添加 SKU
prod-edit-product = 编辑商品
prod-save = 保存
prod-edit-sku-title = 编辑 { $code }
prod-back-to-product = 返回商品
prod-edit-sku = 编辑 SKU
prod-code-stays = 编码保持不变：订单系统通过它引用此 SKU。

## 对账

recon-action = { $action ->
    [frozen] 已冻结
    [repaired] 已修复
   *[other] { $action }
}
recon-trigger = { $trigger ->
    [job] 定时任务
    [cli] 命令行
    [operator] 平台运营
   *[other] { $trigger }
}
recon-redis = { $redis ->
    [on] 正常
    [off] 未启用
    [degraded] 降级
   *[other] { $redis }
}
recon-run-now = 立即对账
recon-last-checked = 最近一次对账：{ $at }（UTC）
recon-intro = 对账会检查：每个库存余额锁定的数量等于未完成订单占用的数量，并且能由流水重新算出；每个时段的已约数等于其预约数；每个券码只被一个订单占用。发现数据不一致时，相关 SKU 或时段会被冻结，直到有人核查、更正并解冻。Redis 与 SQL 的偏差会自动按 SQL 修复，并列在这里。
recon-n-broken = { $n } 处数据不一致：相关 SKU 和时段已冻结。
recon-nothing-sold = 在每个异常经过核查、更正并解冻之前，它们不再销售。
recon-show-open = 只看未处理的异常
recon-findings = 异常
recon-tab-all = 全部（未处理的在前）
recon-tab-open = 未处理
recon-tab-open-n = 未处理（{ $n }）
recon-tab-resolved = 已解决与 Redis 修复
recon-no-more = 这一页没有更多异常了。
recon-back-first = 返回第一页
recon-none-open = 没有未处理的异常：数据一致，没有任何冻结。
recon-none-resolved = 还没有已解决或已修复的异常。
recon-none = 还没有异常：至今每次对账，各项计数都与记录一致。
recon-subject = 对象
recon-expected = 应为
recon-found = 实际
recon-since = 发现时间
recon-resolved = 解决时间
recon-status-open = 未处理
recon-status-resolved = 已解决
recon-review = 核查
recon-details = 详情
recon-page-n = 第 { $n } 页
recon-newer = 较新
recon-older = 较早
recon-latest-runs = 最近的对账
recon-no-runs-lead = 还没有运行过对账。每个实例每隔几分钟会自动运行一次，也可以用命令
recon-no-runs-tail = {" "}或上方的按钮运行。
recon-started-utc = 开始时间（UTC）
recon-trigger-h = 触发方式
recon-scope-h = 检查范围
recon-scope = { $scope ->
    [changed] 上次以来的变更
   *[other] 全部
}
recon-by = 操作人
recon-checked = 检查数
recon-broken = 不一致
recon-redis-repairs = Redis 修复
recon-redis-h = Redis
recon-error = 错误
recon-running = 运行中
recon-slot-at = 时段 { $time }

recon-finding-n = 异常 #{ $id }
recon-finding-lower = 异常 #{ $id }
recon-freezes-slot = 此异常冻结了该时段：解冻前不接受预约。
recon-freezes-sku = 此异常冻结了该 SKU：解冻前不接受下单锁定。
recon-slot-frozen-by = 该时段已被
recon-sku-frozen-by = 该 SKU 已被
recon-frozen-by-tail = {" "}冻结。
recon-frozen-by-tail-open = {" "}冻结；在两个异常都解决之前，此异常也会让它保持冻结。
recon-slot-not-frozen = 该时段目前未被冻结。
recon-sku-not-frozen = 该 SKU 目前未被冻结。
recon-balance-now = 当前余额（总数 / 锁定 / 已售 / 冻结）
recon-found-at = 发现时间
recon-run-n = 对账 #{ $id }
recon-action-taken = 已采取的措施
recon-resolution = 处理说明
recon-correct-balance = 更正余额
recon-correct-balance-explain = 两种更正都会连同您填写的原因记入流水，并与余额在同一事务中完成。更正后该 SKU 仍保持冻结，直到您在下方解冻。
recon-restore = 恢复
recon-restore-explain = 把余额恢复为流水所记的数量，并按未完成订单占用的数量锁定。适用于余额被误改的情况。
recon-accept = 接受
recon-accept-explain = 保留当前余额，并把无法解释的差额记入流水。适用于余额正确（仓库盘点可以证实）而流水漏记了某次变动的情况。仅在锁定数量与未完成订单一致时可用。
recon-reason-example = 5 月 12 日手工修改数据库，工单 #482
recon-restore-button = 按流水和未完成订单恢复余额
recon-accept-button = 接受当前余额（记入差额）
recon-correct-slot = 更正时段
recon-correct-slot-explain = 把该时段的已约数设为其有效预约数（若超出名额则拒绝）。更正后该时段仍保持冻结，直到您在下方解冻。
recon-correct-slot-button = 按有效预约设置已约数
recon-fix-overbooked = 此类异常无法自动更正：请在时段页面取消预约（先致电顾客）或增加名额，直到预约数不超过名额，然后解冻。
recon-fix-code = 此类异常无法自动更正：请在券码页面核查该券码及其订单并处理妥当，然后解冻。
recon-unfreeze = 解冻
recon-unfreeze-explain-slot = 解决此异常，让该时段重新可售。对账会先检查数据：只要仍不一致，就不会解冻。
recon-unfreeze-explain-sku = 解决此异常，让该 SKU 重新可售。对账会先检查数据：只要仍不一致，就不会解冻。
recon-unfreeze-link = 解冻…

recon-unfreeze-title = 解冻 · 异常 #{ $id }
recon-already-resolved = 异常 #{ $id } 已经解决
recon-resolved-at = 已于 { $at } 解决：没有需要解冻的了。
recon-resolved-at-by = 已由 { $who } 于 { $at } 解决：没有需要解冻的了。
recon-unfreeze-slot-question = 确定解冻异常 #{ $id } 的时段吗？
recon-unfreeze-sku-question = 确定解冻异常 #{ $id } 的 SKU 吗？
recon-unfreeze-then-slot = 此异常将标为已解决并附上您的说明，该时段立即恢复接受预约。对账会先检查数据：若仍不一致，则不作任何更改，并告诉您哪里仍有问题。
recon-unfreeze-then-sku = 此异常将标为已解决并附上您的说明，该 SKU 立即恢复接受下单锁定。对账会先检查数据：若仍不一致，则不作任何更改，并告诉您哪里仍有问题。
recon-unfreeze-then-slot-other = 此异常将标为已解决并附上您的说明，该时段立即恢复接受预约，除非异常 #{ $other } 仍冻结着它。对账会先检查数据：若仍不一致，则不作任何更改，并告诉您哪里仍有问题。
recon-unfreeze-then-sku-other = 此异常将标为已解决并附上您的说明，该 SKU 立即恢复接受下单锁定，除非异常 #{ $other } 仍冻结着它。对账会先检查数据：若仍不一致，则不作任何更改，并告诉您哪里仍有问题。
recon-note = 说明
recon-note-example = 余额已恢复，并与仓库盘点核对无误
recon-keep-frozen = 保持冻结

## 不可售

sell-sku = SKU
sell-product = 商品
sell-why = 原因
sell-intro = 当前无法销售的每个 SKU 及其原因：根据商品、库存、时段和券码计算。
sell-judged-ago = { $s ->
    [0] 刚刚核对。
   *[other] { $s } 秒前核对。
}
sell-judge-now = 立即重新核对
sell-of-n-blocked = / { $n } 个 SKU 当前无法销售。
sell-per-reason = 各原因的 SKU 数
sell-with-warning = 可售，但有提醒：
sell-no-skus = 还没有 SKU。
sell-all-sellable = 所有 SKU 当前都可以销售。
sell-all-n = 全部 { $n } 个 SKU：{ $title }
sell-all-reasons = 全部原因
sell-none-warning = 当前没有 SKU 有此提醒。
sell-none-blocked = 当前没有 SKU 因此原因无法销售。
sell-n-skus = 共 { $n } 个 SKU
prod-policy = 限购
prod-sku-not-saved = 未保存任何更改：请修改下方标出的字段。
prod-policy-explain = 留空表示不限。每位顾客的限购按订单系统的 customer_id 统计该顾客已占用和已购买的数量。
prod-policy-explain-service = 留空表示不限。这些限制只统计订单系统的订单（按其 customer_id）。公开预约页按手机号和地址限制，在门店设置中修改；店员代客预约不受限制。
prod-max-places = 每次预约名额上限（同行人数）
prod-min-notice = 在线预约至少提前（分钟）
prod-change-cutoff = 顾客在线改期或取消截止（开始前分钟数）
prod-notice-hint = 0 表示直到开始。例如 120 即两小时。店员在此时限内代客预约需再确认一次；店员在开始前都可取消和改约。
prod-max-places-hint = 一位顾客一次最多可预约的名额，例如家庭可设为 4。设为 1 即每次预约 1 人。
prod-max-per-order = 每单最多
prod-max-per-customer = 每位顾客最多
prod-low-stock = 低于此数提示库存不足（留空：使用全局设置）
prod-unit-cost = 单件成本（{ $currency }）
prod-unit-cost-hint = 每件的进货成本。库存报表按此计算库存成本金额，顾客看不到。留空：不设置。
prod-no-price = 未定价
prod-free = 免费
prod-price-new-hint = 填 0 表示免费。留空可稍后定价：定价前该 SKU 不可售。
prod-price-free-hint = 填 0 表示免费。
prod-price-unset-hint = 尚未定价：定价前该 SKU 不可售（填 0 表示免费）。
prod-stock-fieldset = 库存
prod-stock-tracked = 计库存：只卖有货的
prod-stock-unlimited = 不计库存：永不售罄（虚拟商品）
prod-deduct-on-order = 下单扣减（付款前占用）
prod-deduct-on-payment = 付款扣减（下单只校验）
prod-deduct-explain = 更改只影响之后的订单；未结订单按下单时的方式结算。
codes-code-title = 券码 #{ $id }
codes-sold-at = 售出时间
codes-change = 锁定、解锁或作废
codes-history = 历史
codes-no-history = 此券码导入后没有任何变动。
codes-event = { $action ->
    [VOIDED] 售后作废
    [REDEEMED] 已核销
    [UNREDEEMED] 撤销核销
    [REISSUED] 作废并换发
    [LOCKED] 已锁定
    [UNLOCKED] 已解锁
    [INVALIDATED] 已作废
   *[other] { $action }
}
sell-see-holding-orders = 查看占用它的订单
sell-prev = 上一页
sell-next = 下一页

## 库存

stock-kind = { $kind ->
    [RECEIVE] 入库
    [WRITE_OFF] 报损
    [COUNT] 盘点
    [FREEZE] 冻结
    [UNFREEZE] 解冻
    [TRANSFER] 调拨
    [RESERVE] 下单锁定
    [CONFIRM] 确认售出
    [RELEASE] 释放
    [EXPIRE] 超时释放
    [RETURN_RESTOCK] 退货入库
    [RETURN_DAMAGED] 退货报损
    [CORRECTION] 对账更正
   *[other] { $kind }
}
stock-tile-on-hand = 在库
stock-col-on-hand = 在库
stock-col-committed = 订单占用
stock-col-held = 冻结
stock-tile-on-hand-explain = 仓库里的件数：可售、订单占用和冻结的合计。
stock-tile-available-explain = 新订单现在可以占用的件数。
stock-tile-committed = 订单占用
stock-tile-committed-explain = 未付款订单占用，付款、取消或超时后变化。
stock-tile-unavailable = 冻结
stock-tile-unavailable-explain = 暂停销售的件数：质检中，或损坏待处理。
stock-holds = 冻结中（暂停销售）
stock-held = 冻结数
stock-held-since = 冻结时间
stock-hold-due = 已到解冻日
stock-release-hold = 解冻…
stock-nothing-held = 没有冻结的库存。
stock-which-hold = 冻结记录
stock-n-held = 冻结 { $n } 件
stock-from-warehouse = 调出仓库
stock-to-warehouse = 调入仓库
stock-counted-on-hand = 盘点在库数
stock-units = 件数
stock-task = { $kind ->
    [RECEIVE] 入库
    [WRITE_OFF] 报损
    [TRANSFER] 调拨
    [FREEZE] 冻结
    [UNFREEZE] 解冻
   *[COUNT] 盘点
}
stock-task-explain = { $kind ->
    [RECEIVE] 到货的件数：供应商送货，或退货重新上架。
    [WRITE_OFF] 不再可售的件数：损坏、丢失或赠送。
    [TRANSFER] 从一个仓库调到另一个仓库的件数。
    [FREEZE] 暂停销售、直到有人解冻的件数，例如等待质检。
    [UNFREEZE] 把一笔冻结中的件数恢复销售。
   *[COUNT] 货架上实际清点的数量：与账面的差异会记入流水，记录前会先显示差异。
}
stock-task-submit = { $kind ->
    [RECEIVE] 入库
    [WRITE_OFF] 报损
    [TRANSFER] 调拨
    [FREEZE] 冻结
    [UNFREEZE] 解冻
   *[COUNT] 查看差异
}
stock-note-example = { $kind ->
    [RECEIVE] 供应商送货单 #1234
    [WRITE_OFF] 运输途中破损
    [TRANSFER] 备东区订单
    [FREEZE] 检查是否受潮
    [UNFREEZE] 质检通过
   *[COUNT] 月度盘点
}
stock-never-stocked = 此 SKU 从未有过库存。首次入库后，这里会显示销量、可售天数和走势图。
stock-chart-window = 走势图时段
stock-n-days-window = { $n } 天
stock-chart-label = 近 { $days } 天的可售件数（峰值 { $peak }）
stock-chart-caption = 近 { $days } 天可售走势 · 峰值 { $peak }
stock-title = 库存 · { $code }
stock-of = 库存：
stock-frozen-no-reservations = 解冻前，此 SKU 不接受下单锁定。
stock-tile-available = 可售
stock-tile-sold = 已售
stock-none = 还没有任何仓库的库存。
stock-unlimited-note = 此 SKU 不计库存（无限）：永不售罄，也不占用库存。每笔销售仍记入下方流水。
stock-unlimited-edit = 更改库存方式
stock-none-admin = 还没有任何仓库的库存。请在下方办理首次入库。
stock-available = 可售
stock-sold = 已售
stock-adjust = 调整库存
stock-count-in = 盘点 { $warehouse }：当前在库
stock-counted = ，盘点数
stock-no-difference = 没有差异：确认后记录本次盘点。
stock-will-be-booked = 将记入流水。
stock-confirm-count = 确认盘点
stock-last-30-days = 近 30 天
stock-sold-7-30 = 已售（7 / 30 天）
stock-sell-through = 售罄率（30 天）
stock-cover-7d = 按 7 天销量可售天数
stock-cover-30d = 按 30 天销量可售天数
stock-n-days = { $n } 天
stock-no-sales = 无销量
stock-out-of-stock = 缺货时长
stock-never-out = 从未缺货
stock-dur-under-minute = 不到 1 分钟
stock-dur-days-hours = { $d } 天 { $h } 小时
stock-dur-hours-minutes = { $h } 小时 { $m } 分钟
stock-dur-minutes = { $m } 分钟
stock-ledger = 库存流水
stock-all = 全部
stock-from-date = 开始日期
stock-to-date = 结束日期
stock-export-csv = 导出 CSV
stock-no-rows = 没有流水记录。
stock-no-rows-match = 没有符合筛选条件的流水记录。
stock-time = 时间
stock-qty = 数量
stock-change = 变动
stock-buckets = 总库存 / 订单占用 / 已售 / 冻结
stock-order = 订单
stock-by = 操作人
stock-change-of = { $bucket ->
    [total] 总库存
    [locked] 订单占用
    [sold] 已售
    [frozen] 冻结
   *[other] { $bucket }
} { $change }
stock-change-sep = {"，"}
stock-n-rows = 共 { $n } 条
apikey-rate = 速率上限
apikey-rate-default = 默认（每秒 { $rate } 次）
apikey-rate-unlimited = 不限
apikey-rate-per-second = 每秒 { $rate } 次
apikey-rate-set = 设置
apikey-rate-hint = 每个实例每秒的请求数：0 为不限，留空用默认值。
apikey-rate-default-label = 默认

## 库存报表

report-title = 库存报表
report-explain = 所有仓库（或某一仓库）中每个实物 SKU 的在库、销量，以及按近 30 天销量可售的天数。点击列名即可排序。
report-search-placeholder = SKU 编码、名称或商品
report-no-goods = 还没有可统计的实物商品。
report-none-match = 没有符合筛选条件的 SKU。
report-n-skus = { $n ->
   *[other] 个 SKU
}
report-status = { $status ->
    [out_of_stock] 缺货
    [low] 库存不足
    [ok] 有货
   *[unlimited] 不计库存
}
report-low-below = 可售少于 { $n } 件
report-col-sku = SKU
report-col-sold-7d = 7 天销量
report-col-sold-30d = 30 天销量
report-col-cover = 可售天数
report-col-unit-cost = 单件成本
report-value-at-cost = 库存成本金额

## 库存表格（CSV 导入入库和盘点）

sheet-title = 导入库存表格
sheet-explain = 用表格记录送货单或盘点：上传后先查看每一行的效果，再确认应用。同一文件只能应用一次。
sheet-step-template = 从模板开始：
sheet-template = { $kind ->
    [counts] 含全部 SKU 的盘点表
   *[receipts] 空白入库表
}
sheet-step-columns = 保留第一行列名：sku、warehouse、qty，可选 reason_code、note。
sheet-step-preview = 上传：确认应用预览之前不会记录任何库存。
sheet-kind = 数量的含义
sheet-kind-name = { $kind ->
    [counts] 盘点（设为货架上的实际数量）
   *[receipts] 入库（增加到货数量）
}
sheet-file = 文件
sheet-limits = UTF-8 编码的 CSV，或 Excel 另存的 CSV（GB18030），最大 { $mb } MB、{ $lines } 行。盘点表中未填数量的行会跳过。
sheet-upload = 上传并预览
sheet-recent = 最近的表格
sheet-none-yet = 还没有导入过表格。
sheet-applied-lines = 已应用：{ $n } 行
sheet-not-applied = 未应用
sheet-n = 表格 #{ $id }
sheet-mode = { $mode ->
    [all_or_nothing] 全部或全不
   *[valid_only] 仅有效行
}
sheet-see-report = 查看库存报表
sheet-duplicate = 此文件已作为表格 #{ $id } 应用过，不能再次应用。
sheet-summary = { $good } 行可以记录，{ $bad } 行不能。
sheet-skipped = 已跳过 { $n } 个空行。
sheet-apply-all = 全部应用（{ $n } 行）
sheet-apply-valid = 仅应用 { $n } 个有效行
sheet-all-needs-clean = “全部或全不”要求每一行都有效。
sheet-upload-another = 上传其他文件
sheet-bad-lines = 不能记录的行
sheet-good-lines = 将要记录的行
sheet-line = 行号
sheet-as-written = 原文
sheet-why = 原因
sheet-on-hand-now = 当前在库
sheet-difference = 差异
report-import = 导入库存表格

# Multi-visit passes (issue 54).
prod-uses = 每个券码可用次数
prod-uses-hint = 1：单次券。大于 1：次卡（如 10 次），每次在核销台核销扣一次。券码售出后不能再修改。
