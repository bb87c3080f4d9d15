# 后台页面：概览与排班（其余页面陆续移入）。
back = 返回
pager = 分页
pager-page-of = 第 { $page } / { $pages } 页
pager-prev = 上一页
pager-next = 下一页
product-status = { $status ->
    [DRAFT] 草稿
    [ONLINE] 已上架
    [OFFLINE] 已下架
   *[other] { $status }
}

booking-status = { $status ->
    [BOOKED] 已预约
    [CANCELLED] 已取消
    [ATTENDED] 已到店
    [NO_SHOW] 爽约
   *[other] { $status }
}

dash-open-findings = 未处理的对账异常：{ $n } 个。
dash-frozen-by-findings = 对账发现 { $n } 处数据不一致，已冻结相关 SKU 或时段：在有人核查之前不再销售。
dash-review-findings = 查看异常
dash-products = 商品
dash-merchants = 商户
dash-not-sellable = 不可售
dash-low-stock = 库存不足
dash-open-findings-tile = 未处理的对账异常
dash-bookings-today = 今日预约
dash-no-products = 还没有商品。
dash-create-first = 创建第一个商品。
dash-stores = 门店
dash-no-stores = 还没有门店。添加门店：
dash-warehouses = 仓库
dash-no-warehouses = 还没有仓库。添加仓库：

sched-tab-week = 周视图
sched-tab-day = 日预约
sched-tab-closures = 停约
sched-tab-staff = 员工
sched-tab-metrics = 数据
sched-choose-store = 选择门店
sched-show = 查看
sched-times-in = 时间按 { $tz }
sched-prev-week = ← 上一周
sched-next-week = 下一周 →
sched-this-week = 本周
sched-week-of = { $week } 这一周
sched-service = 服务
sched-all-services = 全部服务
sched-everyone = 全部员工
sched-filter = 筛选
sched-no-slots = 本周没有时段。
sched-slots-come-from = 时段由服务的每周排班生成：
sched-create-service-first = 请先创建服务类商品，其每周排班会生成时段。
sched-no-slots-filtered = 本周没有符合筛选条件的时段。
sched-bookings-of = { $date } 的预约
sched-weekly-schedules = 每周排班：
fill-free = 空闲
fill-nearly-full = 将满
fill-full = 已满
fill-closed = 停约
fill-past = 已开始或已过
sched-bookings = 预约
sched-prev-day = ← 前一天
sched-next-day = 后一天 →
sched-today = 今天
sched-day = 日期
sched-go = 前往
sched-no-bookings = 当天没有预约。
sched-time = 时间
sched-reference = 预约号
sched-confirm-cancel = 确定取消 { $name } 的预约 { $reference } 吗？名额将释放给其他顾客。
sched-cancel-booking = 取消预约…
sched-attended = 到店
sched-no-show = 爽约
sched-n-bookings = { $n } 个预约
sched-no-store = 该商户还没有门店。时段、预约和停约都属于门店，请先创建门店：
sched-operator-choose-store = 请在上方选择一个商户的门店，查看其时段、预约和停约。
sched-choose-store-above = 请在上方选择门店。
sched-cancel-explain = 名额会立即释放给其他顾客。请告知顾客；此操作无法撤销（顾客可以重新预约）。
sched-reason-optional = 原因（选填）
sched-cancel-reason-example = 顾客来电：生病
sched-cancel-the-booking = 取消预约
sched-keep-it = 保留
sched-no-staff = 还没有员工。添加员工后，可在排班中为其安排时段，或为其登记请假。
sched-their-week = 查看其排班
sched-add-staff = 添加员工
sched-add = 添加
